extension Future {
    /// Makes the future a combinator returns, wired to `cancellationToken`.
    ///
    /// `body` runs on `context` with this future's result, unless the token was cancelled first;
    /// it completes `derived` (now, or later for `flatMap`). A cancelled token completes `derived`
    /// with `CancellationError` at once: while this future is pending, while `body` is queued on
    /// `context`, and while `derived` waits for an inner future (see ``complete(with:cancellationToken:)``).
    @inlinable
    func derive<U>(
        on context: some ExecutionContext,
        cancellationToken: CancellationToken,
        _ body: @escaping @Sendable (Result<Value, any Error>, Future<U>) -> Void
    ) -> Future<U> {
        let derived = Future<U>()
        if derived.failIfCancelled(cancellationToken) { return derived }
        derived.cancelOnRequest(of: cancellationToken)
        let callback: Callback<Value> = .result { result in
            if derived.failIfCancelled(cancellationToken) { return }
            body(result, derived)
        }
        // On a DispatchQueue, the target records the queued completion for value()'s deadlock check.
        let target = context.isSynchronous ? .synchronous : QueueCompletion.target(context, completing: derived)
        observe(target: target, cancellationToken: cancellationToken, callback)
        return derived
    }

    /// Fails this future with `CancellationError` if `token` is already cancelled; true if it did.
    /// The prologue of every operation that takes a token.
    @inlinable
    func failIfCancelled(_ token: CancellationToken) -> Bool {
        guard token.isCancellationRequested else { return false }
        complete(with: .failure(CancellationError()))
        return true
    }

    /// Fails this future with `CancellationError` when `token` is cancelled before it completes;
    /// the token's handler is released when the future completes first.
    @inlinable
    func cancelOnRequest(of token: CancellationToken) {
        guard token.canBeCancelled else { return }
        let registration = token.onCancel { [self] in complete(with: .failure(CancellationError())) }
        observe(on: .synchronous, cancellationToken: .none, .result { _ in registration.unregister() })
    }

    /// Completes this future with the result of `inner` (a `flatMap` or `recoverWith` result);
    /// stops waiting for `inner` when the token is cancelled.
    @inlinable
    func complete(with inner: Future<Value>, cancellationToken: CancellationToken) {
        inner.observe(on: .synchronous, cancellationToken: cancellationToken, .result { [self] in complete(with: $0) })
    }

    /// This future, or one completed with its result on `context` for the combinators that run
    /// no closure (`zip`, `timeout(after:)`): their `on:` says where the result is delivered.
    @inlinable
    func delivered(on context: some ExecutionContext, cancellationToken: CancellationToken) -> Future<Value> {
        context.isSynchronous ? self : hop(to: context, cancellationToken: cancellationToken)
    }
}
