extension FutureStream {
    /// A future of the stream's first result: its first value, or its first failure.
    ///
    /// ```swift
    /// let updates = StreamPromise<Int>()
    /// let firstReading: Future<Int> = updates.stream.first()
    /// updates.fulfill(21)                     // completes `firstReading` with 21
    /// updates.fulfill(22)                     // not seen: it has unsubscribed
    /// ```
    ///
    /// ### Semantics
    /// - It completes with the first result this subscription sees: the oldest result the stream
    ///   keeps (its ``capacity``), else the next one published. A failure is a result too: the
    ///   future fails with it.
    /// - A stream that finishes with no result fails it with ``FutureError/noSuchElement``.
    /// - `cancellationToken` cancelled first fails it with `CancellationError` at once (an
    ///   already cancelled token, before it returns), without waiting for the stream.
    /// - Once the future is decided, it unsubscribes: the stream keeps nothing of it, and the
    ///   token keeps no handler.
    ///
    /// - Parameter cancellationToken: Fails the future with `CancellationError` and unsubscribes,
    ///   when cancelled before the stream's first result.
    /// - Returns: A future of the first result.
    public func first(cancellationToken: CancellationToken = .none) -> Future<Value> {
        let first = Future<Value>()
        if first.failIfCancelled(cancellationToken) { return first }
        // The subscription's own request: cancelling it unsubscribes. Linked to the caller's
        // token, so that the token cancels the subscription, whose `.cancelled` fails the future.
        let subscription = CancellationRequest(linkedTo: [cancellationToken])
        subscribe(on: .synchronous, cancellationToken: subscription.token) { event in
            switch event {
            case .result(let result): first.complete(with: result)
            case .finished: first.complete(with: .failure(FutureError.noSuchElement))
            case .cancelled: first.complete(with: .failure(cancelledFailure))
            }
            // Decided: unsubscribe, and release the link to the caller's token.
            subscription.cancel()
        }
        return first
    }
}
