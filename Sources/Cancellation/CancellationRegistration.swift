/// A handler stored on a token by ``CancellationToken/onCancel(_:)``, which can be removed again.
///
/// Unregister when the work finished before cancellation, so the handler (and everything it
/// captures) is released at once instead of living as long as the request. This is .NET's
/// `CancellationTokenRegistration`.
///
/// ```swift
/// let registration = token.onCancel { socket.close() }
/// let reply = try socket.read()
/// registration.unregister()
/// ```
///
/// Registrations are equal when they refer to the same stored handler. A registration returned
/// for a handler that ran at once or was never stored (``CancellationToken/none``) is inert.
public struct CancellationRegistration: Sendable, Hashable {
    /// The request's core, or for a striped request the stripe that stores the handler (see
    /// ``RegistrationOwner``); nil when inert.
    let owner: RegistrationOwner?
    let key: RegistrationList.Key?

    /// The registration of a handler that ran at once or was never stored.
    static var inert: CancellationRegistration {
        CancellationRegistration(owner: nil, key: nil)
    }

    /// Removes the handler if it has not started yet.
    ///
    /// ```swift
    /// let registration = token.onCancel { print("cancelled") }
    /// if registration.unregister() { print("the handler will never run") }
    /// ```
    ///
    /// ### Semantics
    /// - O(1) whatever the number of registrations, and never blocks on a running handler.
    /// - Racing ``CancellationRequest/cancel()``, exactly one of "this returned `true`" and "the
    ///   handler ran" happens.
    /// - Calling it again, or after the handler ran, does nothing and returns `false`.
    ///
    /// - Returns: `true` exactly when this call removed the handler before it started.
    @discardableResult
    public func unregister() -> Bool {
        guard let key else { return false }
        // Optional chaining on the stored owner, not `guard let owner`: the binding makes a copy, a
        // retain and a release around the call, and on a token that threads share two atomic writes
        // to one cache line, which the threads pass back and forth (guarded by callgrind
        // `cancellation-register` and `RoundsDriver 11-2`).
        return owner?.removeHandler(key) ?? false
    }

    /// Removes the handler, and if it is running on another thread right now, waits until it returned.
    ///
    /// Use it before releasing what the handler touches:
    ///
    /// ```swift
    /// let registration = token.onCancel { buffer.discard() }
    /// // ...
    /// registration.unregisterAndWait()
    /// buffer.deallocate()  // no handler can be using it any more
    /// ```
    ///
    /// ### Semantics
    /// - Otherwise exactly like ``unregister()``.
    /// - It blocks only while the handler is running on another thread; handlers are meant to be
    ///   short, so this is brief even in async code.
    /// - When it returns, a handler that ran has also been released, with what its closure captured,
    ///   even while the cancelling thread goes on with older handlers.
    /// - Called on the thread that is running cancellation handlers (from inside a handler, for
    ///   example), it returns at once instead of waiting for itself.
    public func unregisterAndWait() {
        guard let key else { return }
        owner?.removeHandlerAndWait(key)  // as in `unregister()`: no copy of the owner
    }

    /// Whether two registrations refer to the same stored handler.
    ///
    /// Inert registrations (of a handler that ran at once, or was never stored) are all equal.
    ///
    /// ```swift
    /// let registration = request.token.onCancel { print("cancelled") }
    /// #expect(registration == registration)
    /// #expect(registration != request.token.onCancel { print("cancelled") })
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: A registration.
    ///   - rhs: Another registration.
    /// - Returns: `true` when both refer to the same handler of the same request.
    public static func == (lhs: CancellationRegistration, rhs: CancellationRegistration) -> Bool {
        lhs.owner === rhs.owner && lhs.key == rhs.key
    }

    /// Hashes the identity that equality compares.
    ///
    /// Lets a set or dictionary keep the registrations of some work, e.g. to unregister them all:
    ///
    /// ```swift
    /// var pending: Set<CancellationRegistration> = [token.onCancel { connection.close() }]
    /// for registration in pending { registration.unregister() }
    /// ```
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(owner.map(ObjectIdentifier.init))
        hasher.combine(key)
    }
}
