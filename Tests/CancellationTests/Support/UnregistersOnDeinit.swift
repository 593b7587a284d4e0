import Cancellation

/// A handler's capture that unregisters `registration` when released: for the tests that a handler
/// is released outside the lock of its request or stripe (inside it, this would deadlock).
final class UnregistersOnDeinit: Sendable {
    let registration: CancellationRegistration

    init(_ registration: CancellationRegistration) {
        self.registration = registration
    }

    func touch() {}

    deinit {
        _ = registration.unregister()
    }
}

extension UnregistersOnDeinit {
    /// Registers `other` with `register`, then a handler that holds the only reference to an
    /// `UnregistersOnDeinit(other)`: releasing that handler unregisters `other`.
    static func handler(
        registeredWith register: (@escaping @Sendable () -> Void) -> CancellationRegistration
    ) -> (registration: CancellationRegistration, other: CancellationRegistration) {
        let other = register {}
        let capture = UnregistersOnDeinit(other)
        return (register { capture.touch() }, other)
    }
}
