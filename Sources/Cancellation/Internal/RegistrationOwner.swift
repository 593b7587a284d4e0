/// What a ``CancellationRegistration`` holds: the request's core, for a handler in the request's own
/// list, or the owner of the stripe its handler is stored in (``StripeOwner``), for a striped request.
///
/// Why not the core always: holding it made every striped `onCancel` retain the core and every
/// dropped registration release it, two atomic writes to the core's first cache line per operation,
/// which the threads sharing a token pass back and forth (`RoundsDriver 11-2`). A stripe owner's
/// reference count is written only by the threads of its stripe's processor.
///
/// A class rather than a protocol: one reference with no witness table keeps a registration two
/// words, and `unregister()` reaches its owner through the stored reference, with no copy (a copy
/// is a retain and a release). The key tells which subclass it is (``RegistrationStripes/isStripeOwned(_:)``).
class RegistrationOwner: @unchecked Sendable {
    // Sendable: no state of its own; each subclass says what makes it safe.

    /// Removes the handler stored under `key`. True exactly when it had not started.
    @inline(__always)
    final func removeHandler(_ key: RegistrationList.Key) -> Bool {
        if RegistrationStripes.isStripeOwned(key) {
            return unsafeDowncast(self, to: StripeOwner.self).unregister(key)
        }
        return unsafeDowncast(self, to: CancellationCore.self).unregister(key)
    }

    /// Like `unregister`, and when the handler is running on another thread, waits until it returned.
    final func removeHandlerAndWait(_ key: RegistrationList.Key) {
        if RegistrationStripes.isStripeOwned(key) {
            unsafeDowncast(self, to: StripeOwner.self).stripe.unregisterAndWait(key)
        } else {
            unsafeDowncast(self, to: CancellationCore.self).unregisterAndWait(key)
        }
    }
}
