// The one path by which anything waits for a future: a continuation (`onComplete` and its
// siblings) or a combinator's derived future (`map` and the rest). "How the core works" in
// Documentation/Internals.md walks through it.

import Dispatch

extension Future {
    // MARK: - Derived futures

    /// Makes the future a combinator returns, wired to `cancellationToken`.
    ///
    /// `body` runs on `context` with this future's result, unless the token was cancelled first;
    /// it completes `derived` (now, or later for `flatMap`). The derived future owns the one
    /// registration on the token: a cancelled token fails `derived` with `CancellationError` at
    /// once, on the cancelling thread, while this future is pending or while `body` is queued on
    /// `context`, and releases the stored callback without running anything on `context`. The
    /// registration ends when `body` has run. (`flatMap`'s wait for its inner future registers
    /// once more, only while it waits: ``complete(with:cancellationToken:)``.)
    ///
    /// A new combinator (an async or main-actor one) needs only a `body`; to run it somewhere
    /// that is not an ``ExecutionContext``, build a ``ContinuationTarget`` and call
    /// ``derive(_:target:cancellationToken:_:)``.
    @inlinable
    func derive<U>(
        on context: some ExecutionContext,
        cancellationToken: CancellationToken,
        _ body: @escaping @Sendable (Result<Value, any Error>, Future<U>) -> Void
    ) -> Future<U> {
        // Without a token, nothing can cancel: no registration, and no token check when it runs.
        guard cancellationToken.canBeCancelled else { return deriveWithoutToken(on: context, body) }
        let target = ContinuationTarget(context)
        return derive(Future<U>(derivedFor: target), target: target, cancellationToken: cancellationToken, body)
    }

    /// ``derive(on:cancellationToken:_:)`` for a combinator that has checked that its token cannot
    /// fire: `canBeCancelled` is a call into the Cancellation module, made once per combinator
    /// (callgrind `futurelib-map`).
    @inlinable
    func deriveWithoutToken<U>(
        on context: some ExecutionContext,
        _ body: @escaping @Sendable (Result<Value, any Error>, Future<U>) -> Void
    ) -> Future<U> {
        let target = ContinuationTarget(context)
        let derived = Future<U>(derivedFor: target)
        // The callback captures only `body` and `derived` (for `map`, the transform and the
        // derived future: one closure context). Made here, where the derived future is a local,
        // not in a method that takes it as a parameter: the optimizer then kept a second retain
        // and a release of it per combinator (guarded by callgrind `futurelib-map`).
        add(target: target, callback: .result { result in body(result, derived) })
        return derived
    }

    /// ``derive(on:cancellationToken:_:)`` with the context already turned into a target.
    @inlinable
    func derive<U>(
        _ derived: consuming Future<U>,  // moved into the callback and out as the result: one retain
        target: ContinuationTarget,
        cancellationToken: CancellationToken,
        _ body: @escaping @Sendable (Result<Value, any Error>, Future<U>) -> Void
    ) -> Future<U> {
        // Without a token, as in ``derive(on:cancellationToken:_:)``.
        guard cancellationToken.canBeCancelled else {
            let future = derived
            add(target: target, callback: .result { result in body(result, future) })
            return future
        }
        let derived = derived  // a constant, for the closures below
        if derived.failIfCancelled(cancellationToken) { return derived }
        let callback: Callback<Value> = .result { result in
            if derived.failIfCancelled(cancellationToken) { return }  // the token won meanwhile
            body(result, derived)
        }
        // When `body` runs inline on a completed source, nothing can cancel in between: no
        // registration.
        guard !isCompleted || !target.isSynchronous else {
            add(target: target, callback: callback)
            return derived
        }
        let cancellable = CancellableCallback(callback) {
            derived.complete(with: .failure(cancelledFailure))
        }
        register(cancellable, target: target, cancellationToken: cancellationToken)
        return derived
    }

    /// ``derive(on:cancellationToken:_:)`` for a combinator whose box stores its closure and the
    /// derived future itself (``MapCallback``, ``FlatMapCallback``), with a token that can fire:
    /// the box is then the callback, its context and the token's handler, one allocation beside
    /// the derived future (AllocationCheck `map-with-token`).
    @inlinable
    func derive<U>(
        on context: some ExecutionContext,
        cancellationToken: CancellationToken,
        box makeBox: (Future<U>) -> CancellableCallback<Value>
    ) -> Future<U> {
        let target = ContinuationTarget(context)
        let derived = Future<U>(derivedFor: target)
        if derived.failIfCancelled(cancellationToken) { return derived }
        let box = makeBox(derived)
        box.token = cancellationToken  // before the box is stored: read by whoever runs it
        // As in ``derive(_:target:cancellationToken:_:)``: inline on a completed source, no registration.
        guard !isCompleted || !target.isSynchronous else {
            add(target: target, callback: .cancellable(box))
            return derived
        }
        register(box, target: target, cancellationToken: cancellationToken)
        return derived
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

    // MARK: - Continuations

    /// Registers `callback` to run on `context` with the result, or with `CancellationError` when
    /// `cancellationToken` fires first.
    @inlinable
    func observe(on context: some ExecutionContext, cancellationToken: CancellationToken, _ callback: Callback<Value>) {
        observe(target: ContinuationTarget(context), cancellationToken: cancellationToken, callback)
    }

    /// Registers `callback` to run on `target`; see ``observe(on:cancellationToken:_:)``.
    @inlinable
    func observe(target: ContinuationTarget, cancellationToken: CancellationToken, _ callback: Callback<Value>) {
        if cancellationToken.isCancellationRequested {
            cancelled(Continuation(target: target, callback: callback))
            return
        }
        // A completed future dispatches at once (or queues behind the completer): no token handler.
        // Inline (`.synchronous`), nothing can cancel before it runs; on another context, the job
        // checks the token when it starts.
        if isCompleted {
            guard !target.isSynchronous, cancellationToken.canBeCancelled else {
                add(target: target, callback: callback)
                return
            }
            addChecking(cancellationToken, target: target, callback: callback)
            return
        }
        guard cancellationToken.canBeCancelled else {
            add(target: target, callback: callback)
            return
        }
        register(CancellableCallback(callback), target: target, cancellationToken: cancellationToken)
    }

    /// A continuation on a completed future, for a context other than `.synchronous`, with a token
    /// that can still fire: its job checks the token when it starts, and a cancelled one wins
    /// (``CancellableCallback/run(with:)``).
    ///
    /// Once the completer has handed every earlier continuation to its context (the phase is
    /// final), ``add(target:callback:)`` would dispatch this one at once: the job itself then
    /// carries the token, in the closure context it allocates anyway, and no box is made. While
    /// the completer still dispatches, the continuation queues behind the earlier ones in a box
    /// that carries the token.
    @inlinable
    func addChecking(_ cancellationToken: CancellationToken, target: ContinuationTarget, callback: Callback<Value>) {
        if phase.isFinal, let result = self.result {
            target.execute {
                callback.invokeClosure(
                    with: cancellationToken.isCancellationRequested ? .failure(cancelledFailure) : result
                )
            }
            return
        }
        let cancellable = CancellableCallback(callback)
        cancellable.token = cancellationToken
        add(target: target, callback: .cancellable(cancellable))
    }

    // MARK: - The state machine's events

    /// Registers `cancellable` on the token, then stores it (or dispatches it if this future is
    /// complete). Registering first means the registration is known before anyone can run or
    /// remove the callback, with no second trip through the lock to attach it. A handler that
    /// ran in between found nothing to remove, so the check after storing removes it instead.
    @inlinable
    func register(
        _ cancellable: CancellableCallback<Value>,
        target: ContinuationTarget,
        cancellationToken: CancellationToken
    ) {
        // The box is the handler and holds this future while registered: a pending future that
        // nobody else holds is kept while the token can fire, and released with its chain once the
        // handler is released unrun (see ``CancellableCallback``). The closure captures the box
        // alone, which then serves as its context: no allocation (AllocationCheck `map-with-token`).
        cancellable.source = self
        cancellable.token = cancellationToken
        cancellable.registration = cancellationToken.onCancelOrRelease { [cancellable] in
            cancellable.tokenHandlerCalled()
        }
        add(target: target, callback: .cancellable(cancellable))
        if cancellationToken.isCancellationRequested { cancellable.cancel(removingFrom: self) }
    }

    /// Stores a continuation, or dispatches it when the future is complete; true if stored.
    ///
    /// `target` and `callback` are consumed: the continuation is made from them outside the lock
    /// and moved into the state, with no copy of the closure (callgrind `futurelib-map`).
    @inlinable @discardableResult
    func add(target: consuming ContinuationTarget, callback: consuming Callback<Value>) -> Bool {
        let isSynchronous = target.isSynchronous
        var continuation: Continuation<Value>? = Continuation(target: target, callback: callback)
        switch withState({ $0.add(&continuation, isSynchronous: isSynchronous, phase: phase) }) {
        case .stored:
            return true
        case .dispatch(let result):
            continuation.take()!.dispatch(result)
            return false
        case .queued:
            return false  // the completing thread dispatches it after the earlier continuations
        }
    }

    /// Calls a continuation that its token removed with `CancellationError`, on its context,
    /// unless it takes only values.
    @inlinable
    func cancelled(_ continuation: Continuation<Value>) {
        guard continuation.callback.takesErrors else { return }  // onSuccess is never called
        continuation.dispatch(.failure(cancelledFailure))
    }
}
