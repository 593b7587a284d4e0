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
