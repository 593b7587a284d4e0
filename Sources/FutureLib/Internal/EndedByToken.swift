/// What a token ends early: a future (failed with `CancellationError`) or a stream (cancelled
/// and finished). The token plumbing every operation with a `cancellationToken:` needs is
/// written once, here, for both.
@usableFromInline
protocol EndedByToken: AnyObject, Sendable {
    /// Ends this future or stream because its token was cancelled; a no-op once it has ended.
    func endCancelled()
    /// Keeps `registration` until this future or stream has ended, then unregisters it.
    func releaseWhenEnded(_ registration: CancellationRegistration)
}

extension EndedByToken {
    /// Ends this future or stream with a cancellation if `token` is already cancelled; true if it
    /// did. The prologue of every operation that takes a token.
    @inlinable
    func failIfCancelled(_ token: CancellationToken) -> Bool {
        guard token.isCancellationRequested else { return false }
        endCancelled()
        return true
    }

    /// Ends this future or stream with a cancellation when `token` is cancelled first; the
    /// token's handler is released when it ends otherwise. For the operations that gather several
    /// sources (`zip`, `sequence`, `race`, …); one-source combinators use `derive`, whose single
    /// registration needs no second continuation.
    @inlinable
    func cancelOnRequest(of token: CancellationToken) {
        guard token.canBeCancelled else { return }
        releaseWhenEnded(token.onCancel { [self] in endCancelled() })
    }

    /// The callback adapter (`Future(cancellationToken:method:)`, the stream's, URLSession's):
    /// calls `start` with the token to hand to the callback-based work. When `cancellationToken`
    /// is cancelled, this future or stream ends at once with a cancellation and then the work's
    /// token is cancelled, so the work can stop; once this ends otherwise, the link to
    /// `cancellationToken` is removed and the work's token released. With a token already
    /// cancelled, `start` is not called.
    func startAdapted(_ cancellationToken: CancellationToken, _ start: (CancellationToken) -> Void) {
        if failIfCancelled(cancellationToken) { return }
        guard cancellationToken.canBeCancelled else {
            start(.none)
            return
        }
        let operation = CancellationRequest()
        // The handler holds the only reference to `operation`: it goes when the link is removed.
        releaseWhenEnded(
            cancellationToken.onCancel { [self] in
                endCancelled()
                operation.cancel()
            }
        )
        start(operation.token)
    }
}

extension Future: EndedByToken {
    @inlinable
    func endCancelled() {
        complete(with: .failure(cancelledFailure))
    }

    @inlinable
    func releaseWhenEnded(_ registration: CancellationRegistration) {
        observe(on: .synchronous, cancellationToken: .none, .result { _ in registration.unregister() })
    }
}
