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
    /// - Each live source keeps the linked request alive, since it can still cancel it; sources
    ///   that are ``CancellationToken/none`` or can no longer be cancelled are ignored.
    /// - When the linked request is cancelled, its handlers on the sources are unregistered, so
    ///   nothing of it stays behind in a long-lived source.
    ///
    /// - Parameter tokens: The sources. An empty list gives a request only ``cancel()`` can cancel.
    public convenience init(linkedTo tokens: [CancellationToken]) {
        self.init()
        var links: [CancellationRegistration] = []
        links.reserveCapacity(tokens.count)
        for source in tokens where source.canBeCancelled {
            if isCancellationRequested { break }
            // Strong capture: a source that can still cancel this request keeps it alive.
            links.append(source.onCancel { [self] in self.cancel() })
        }
        guard !links.isEmpty else { return }
        // Runs at once if a source already cancelled us; otherwise when we are cancelled.
        token.onCancel { [links] in
            for link in links { link.unregister() }
        }
    }
}
