/// What a registration stored in a stripe holds (``RegistrationOwner``): the stripe's list, and the
/// core while the registrations made before the request got a timer or links are alive.
///
/// Why a class of its own, apart from the stripe's list (``RegistrationStripe``): the core keeps
/// the list for as long as the request can be cancelled, since a handler whose registration was
/// dropped still runs at cancellation. The registrations keep this object. So when the request gets
/// a timer or links, which can cancel it after the request object is gone, the stripe lets go of
/// this object and this object keeps the core (``pin(_:)``) until the last registration holding it
/// is gone: exactly as long as a registration observes the request, as when registrations hold the
/// core. (When this object was the stripe itself, the core's reference to the stripe kept it, and
/// a registration made before the timer and dropped kept the request until the timer fired.)
///
/// Its reference count is written by every registration it is handed to, all from threads of the
/// stripe's processor: the padding keeps its header off the lines of whatever malloc places next.
final class StripeOwner: RegistrationOwner, @unchecked Sendable {
    // Sendable: `stripe` never changes; `pinnedCore` is written and taken only while holding the
    // stripe's lock (``RegistrationStripe/pin(_:)`` and `deinit`).
    let stripe: RegistrationStripe
    /// `stripe.line`, valid while this object holds `stripe`: `unregister()` takes the stripe's lock
    /// with one dependent load less (`RoundsDriver 11-2`).
    let line: UnsafeMutableRawPointer
    /// The core, once the request got a timer or links while registrations held this object.
    var pinnedCore: CancellationCore?
    private let padding: SIMD16<UInt64> = .zero

    init(_ stripe: RegistrationStripe) {
        self.stripe = stripe
        line = stripe.line
    }

    /// Removes the handler stored under `key`. True exactly when it had not started. The handler is
    /// released here, outside the stripe's lock.
    @inline(__always)
    func unregister(_ key: RegistrationList.Key) -> Bool {
        // Kept in a binding to the end, not compared and discarded: the optimizer may release a
        // discarded result inside the lock, and the handler's captures' `deinit`s are user code. A
        // `let` (whose lifetime the optimizer may not end before the unlock), not
        // `withExtendedLifetime`: passing a closure to that generic function allocated a
        // reabstraction thunk per call (guarded by `RoundsDriver 11-2`).
        let removed = RegistrationStripe.remove(key, line: line)
        return removed != nil
    }

    deinit {
        // Taken under the lock it was stored under (ThreadSanitizer sees that order), released after.
        // Kept in a binding to the end: discarded (`_ =`), the optimizer released it inside the lock
        // (release builds), and the core's `deinit` then took the same spin lock: a deadlock
        // (`make stress`, "the last registration made before the timer lets the request go").
        let pin = stripe.takePin(of: self)
        withExtendedLifetime(pin) {}
    }
}
