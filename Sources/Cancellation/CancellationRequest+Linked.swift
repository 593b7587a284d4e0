extension CancellationRequest {
    /// Creates a request that is cancelled as soon as any of `tokens` is.
    ///
    /// Use it to combine a caller's token with a deadline or a shutdown signal of your own, and
    /// cancel the combination yourself when needed; cancelling it does not affect the sources.
    ///
    /// ```swift
    /// func handle(_ request: Request, cancellationToken: CancellationToken) async throws {
    ///     let deadline = CancellationRequest(cancelAfter: .seconds(10))
    ///     let linked = CancellationRequest(linkedTo: [cancellationToken, deadline.token, shutdown.token])
    ///     try await backend.send(request, cancellationToken: linked.token)
    /// }
    /// ```
    ///
    /// ### Semantics
    /// - If any source is already cancelled, the new request is cancelled before `init` returns.
    /// - A live source keeps the linked request cancellable while something can still observe it
    ///   (the request, a copy of its token, or a registration on it), so the token alone is
    ///   enough. Sources that are ``CancellationToken/none`` or can no longer be cancelled are ignored.
    /// - Its handlers on the sources are removed when it is cancelled, and when nothing can observe
    ///   it any more: a long-lived source keeps nothing of the requests linked to it, with no
    ///   `dispose()` to call.
    ///
    /// - Parameter tokens: The sources. An empty list gives a request only ``cancel()`` can cancel.
    public convenience init(linkedTo tokens: [CancellationToken]) {
        self.init()
        core.link(to: tokens)
    }

    /// Creates a request that is cancelled when `parent` is, with its reason, or `timeout` from now,
    /// with ``DeadlineExceededError``, whichever comes first: gRPC's rule for an outgoing call.
    ///
    /// Its ``CancellationToken/deadline`` is the earlier of `timeout` from now and the parent's
    /// deadline, so a call made while handling a request never outlives what its caller has left:
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let inbound = CancellationRequest(cancelAfter: .seconds(2), clock: clock)  // the caller's budget
    /// let call = CancellationRequest(linkedTo: inbound.token, timeout: .seconds(5), clock: clock)
    /// #expect(call.token.timeRemaining == .seconds(2))  // the parent's deadline is the earlier
    /// let quick = CancellationRequest(linkedTo: inbound.token, timeout: .milliseconds(500), clock: clock)
    /// #expect(quick.token.timeRemaining == .milliseconds(500))
    /// ```
    ///
    /// ### Semantics
    /// - It is ``init(linkedTo:)-([CancellationToken])`` with the one source `parent`, then
    ///   ``cancel(after:clock:)`` with `timeout`: a parent already cancelled cancels it before `init`
    ///   returns, with the parent's reason (even with a `timeout` of zero); otherwise a `timeout` of
    ///   zero or less cancels it at once with ``DeadlineExceededError``.
    /// - ``CancellationToken/none`` (or a token that can no longer be cancelled) as `parent` gives a
    ///   request with the timer alone.
    /// - Its own timer can be re-armed (``cancel(after:)``) like any; the parent's deadline stays a
    ///   bound on its ``CancellationToken/deadline`` all the same.
    /// - What it keeps follows both rules: the link (removed when it is cancelled or no longer
    ///   observed) and the timer (stopped then).
    ///
    /// - Parameters:
    ///   - parent: The token whose cancellation this request inherits (a handler's token).
    ///   - timeout: The longest this request may run, from now. Negative counts as zero.
    ///   - clock: The clock that measures `timeout`. Defaults to ``TimerClock/system``.
    public convenience init(linkedTo parent: CancellationToken, timeout: Duration, clock: some TimerClock = .system) {
        self.init()
        core.link(to: CollectionOfOne(parent))
        cancel(after: timeout, clock: clock)
    }

    /// Creates a request that is cancelled as soon as any of `tokens` is, the tokens listed one by
    /// one: the same as passing them as an array.
    ///
    /// ```swift
    /// let shutdown = CancellationRequest()
    /// let deadline = CancellationRequest(cancelAfter: .seconds(10))
    /// let perRequest = CancellationRequest(linkedTo: shutdown.token)
    /// let combined = CancellationRequest(linkedTo: shutdown.token, deadline.token)
    /// ```
    ///
    /// - Parameter tokens: The sources, with the semantics of the array form.
    public convenience init(linkedTo tokens: CancellationToken...) {
        self.init(linkedTo: tokens)
    }

    /// Creates a request that is cancelled once every one of `tokens` is, with the last one's reason.
    ///
    /// Use it when work serves several callers and should stop only when none of them wants it
    /// any more: one shared upstream call for several waiters, each with its own token.
    ///
    /// ```swift
    /// let alice = CancellationRequest()
    /// let bob = CancellationRequest()
    /// let shared = CancellationRequest(linkedToAll: [alice.token, bob.token])
    /// alice.cancel()
    /// #expect(!shared.isCancellationRequested)  // bob still waits
    /// bob.cancel(reason: DeadlineExceededError())
    /// #expect(shared.token.cancellationReason is DeadlineExceededError)
    /// ```
    ///
    /// ### Semantics
    /// - It is cancelled when the last of its sources is, on that source's cancelling thread, with
    ///   that source's ``CancellationToken/cancellationReason``; exactly once, however many threads
    ///   cancel the sources at once. Sources already cancelled count at once: all of them cancelled
    ///   gives a request cancelled before `init` returns.
    /// - With ``CancellationToken/none`` or a token whose request can no longer be cancelled among
    ///   `tokens`, or with no tokens at all, it is never cancelled by its sources, and nothing is
    ///   stored on them. (``cancel()`` still cancels it.)
    /// - Its lifetime is that of ``init(linkedTo:)-([CancellationToken])``: live sources keep it
    ///   cancellable while something can observe it, and its handlers on the sources are removed
    ///   when it is cancelled or when nothing can observe it any more. A source that can no longer
    ///   be cancelled makes it uncancellable by its sources.
    ///
    /// - Parameter tokens: The sources, all of which must be cancelled.
    public convenience init(linkedToAll tokens: [CancellationToken]) {
        self.init()
        core.link(toAll: tokens)
    }
}
