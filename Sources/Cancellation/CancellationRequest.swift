/// The owner side of cancellation: the object that decides, once, that work should stop.
///
/// Hand out its ``token`` to the code that does the work; keep the request itself where the
/// decision is made. This is .NET's `CancellationTokenSource`.
///
/// ```swift
/// let request = CancellationRequest()
/// let download = startDownload(url, cancellationToken: request.token)
/// cancelButton.onTap { request.cancel() }
/// ```
///
/// ### Reasons
/// ``cancel(reason:)`` says why: a deadline (``DeadlineExceededError``), a client that went away, a
/// shutdown. Work reads it from ``CancellationToken/cancellationReason``; ``cancel()`` gives
/// `CancellationError()`.
///
/// ### Handlers
/// ``cancel()`` runs every handler registered with ``CancellationToken/onCancel(_:)`` exactly once,
/// synchronously on the calling thread, newest registration first, and outside any internal lock:
/// a handler may register, unregister or cancel other requests without deadlock.
///
/// ### Lifetime
/// Tokens do not keep their request alive. When a request is deallocated without being cancelled,
/// its tokens' ``CancellationToken/canBeCancelled`` turns `false` and every stored handler is
/// released without running.
///
/// A pending timer (``cancel(after:)``) or a live source of a linked request
/// (``init(linkedTo:)-([CancellationToken])``) keeps the request *cancellable* while something can still observe it:
/// the request, a copy of its token, or a registration on it. Once all of those are gone, its
/// links are removed from the sources and its timer is stopped and released at once, so nothing
/// is kept for a request that nobody can observe, and there is nothing to dispose.
public final class CancellationRequest: Sendable {
    let core = CancellationCore()

    /// Creates a request that is not cancelled.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// #expect(request.isCancellationRequested == false)
    /// ```
    public init() {}

    deinit {
        // Without a retain of its own: `core` is alive until this `deinit` returns (InstructionCheck
        // `request-released`).
        Unmanaged.passUnretained(core)._withUnsafeGuaranteedRef { $0.requestReleased() }
    }

    /// The token to hand to the work that this request can cancel.
    ///
    /// Tokens are cheap values; every call returns an equal token.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// let token = request.token
    /// request.cancel()
    /// #expect(token.isCancellationRequested)
    /// ```
    public var token: CancellationToken {
        CancellationToken(core: core)
    }

    /// Whether ``cancel()`` has been called (or a timer or linked source fired).
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// request.cancel()
    /// #expect(request.isCancellationRequested)
    /// ```
    ///
    /// It turns `true` at the start of ``cancel()``, before the handlers run.
    public var isCancellationRequested: Bool {
        core.isCancellationRequested
    }

    /// Requests cancellation and runs the registered handlers.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// request.token.onCancel { print("stopping") }
    /// request.cancel()  // prints "stopping"
    /// request.cancel()  // does nothing
    /// ```
    ///
    /// ### Semantics
    /// - Idempotent: only the first call has an effect; later calls return at once, even while the
    ///   first is still running handlers on another thread.
    /// - Every handler registered before this call runs exactly once, synchronously on this
    ///   thread, newest registration first. The internal lock is taken once per handler and is
    ///   never held while a handler runs.
    /// - A pending timer is stopped. Handlers are released as they run.
    /// - The token's ``CancellationToken/cancellationReason`` is `CancellationError()`: this is
    ///   ``cancel(reason:)`` with that reason.
    public func cancel() {
        core.cancel()
    }

    /// Requests cancellation, saying why, and runs the registered handlers.
    ///
    /// The reason is for whoever reads ``CancellationToken/cancellationReason``, to tell a client
    /// that went away from a deadline or a shutdown; futures and streams that the token cancels
    /// still fail with `CancellationError`, so `catch is CancellationError` keeps working.
    ///
    /// ```swift
    /// struct ClientDisconnected: Error {}
    ///
    /// let request = CancellationRequest()
    /// request.cancel(reason: ClientDisconnected())
    /// request.cancel(reason: DeadlineExceededError())  // too late: the first cancellation wins
    /// #expect(request.token.cancellationReason is ClientDisconnected)
    /// ```
    ///
    /// ### Semantics
    /// - Exactly as ``cancel()``, whose reason is `CancellationError()`.
    /// - The first cancellation wins, its reason included, whether the others come later or race
    ///   it from other threads (``cancel()``, a timer, a linked source): every reader of
    ///   ``CancellationToken/cancellationReason`` sees that one reason, from the moment
    ///   ``isCancellationRequested`` turns `true`.
    ///
    /// - Parameter reason: Why the work should stop.
    public func cancel(reason: any Error) {
        core.cancel(reason: reason)
    }
}
