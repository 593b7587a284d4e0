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
}
