import FutureLibConcurrencyHelpers

// The machinery behind the stream combinators: a derived stream fed by one subscriber of the source.

extension FutureStream {
    /// A stream of the same capacity fed by `body`, which runs on `context` for each result of
    /// this stream. It finishes when this one does (through `finished` when given), and is
    /// cancelled (a `CancellationError`, then the end) as soon as `cancellationToken` is.
    ///
    /// The new stream is a stage (``FutureStream/isStage``): this stream's subscriber holds it
    /// weakly, so a stage that nobody holds and nobody subscribes to is released and leaves this
    /// stream, its closure with it. `keepsSubscription` (`andThen`, whose point is its side
    /// effect) holds it strongly instead: it stays subscribed until this stream finishes.
    @inlinable
    func derive<U: Sendable>(
        on context: any ExecutionContext,
        cancellationToken: CancellationToken,
        keepsSubscription: Bool = false,
        _ body: @escaping @Sendable (Result<Value, any Error>, FutureStream<U>) -> Void,
        finished: (@Sendable (FutureStream<U>) -> Void)? = nil
    ) -> FutureStream<U> {
        let derived = FutureStream<U>(capacity: capacity, isStage: !keepsSubscription)
        if derived.failIfCancelled(cancellationToken) { return derived }
        @Sendable func deliver(_ event: StreamEvent<Value>, to derived: FutureStream<U>) {
            switch event {
            case .result(let result):
                // Checked again: the token may have been cancelled after this result was queued.
                guard !cancellationToken.isCancellationRequested else { return }
                body(result, derived)
            case .finished:
                if let finished { finished(derived) } else { derived.finish() }
            case .cancelled:
                derived.cancelAndFinish()  // done already by the token's handler; a no-op then
            }
        }
        if keepsSubscription {
            derived.cancelOnRequest(of: cancellationToken)
            subscribe(on: context, cancellationToken: cancellationToken, feedsStream: true) { event in
                deliver(event, to: derived)
            }
            return derived
        }
        if cancellationToken.canBeCancelled {
            derived.releaseOnFinish(cancellationToken.onCancel { [weak derived] in derived?.cancelAndFinish() })
        }
        let subscriber = subscribe(on: context, cancellationToken: cancellationToken, feedsStream: true) {
            [weak derived] event in
            guard let derived else { return }  // released: nothing can observe it
            deliver(event, to: derived)
        }
        if let subscriber { derived.installDetach(leaving(subscriber)) }
        return derived
    }

    /// A stream fed by the futures `step` returns for each result (or directly by the result it
    /// returns), in the order the futures complete. It finishes when this stream has finished and
    /// every future so far has completed.
    func deriveAwaiting<U: Sendable>(
        on context: any ExecutionContext,
        cancellationToken: CancellationToken,
        _ step: @escaping @Sendable (Result<Value, any Error>) -> AwaitingStep<U>
    ) -> FutureStream<U> {
        let pending = PendingInner()
        return derive(
            on: context,
            cancellationToken: cancellationToken,
            { result, derived in
                switch step(result) {
                case .now(let result):
                    derived.publish(result)
                case .later(let future):
                    pending.start()
                    future.observe(
                        on: .synchronous,
                        cancellationToken: cancellationToken,
                        .result { result in
                            // A cancelled token reaches this continuation with `CancellationError`
                            // too: the stream's own handler publishes the one terminal
                            // `CancellationError` and finishes it.
                            guard !cancellationToken.isCancellationRequested else { return }
                            derived.publish(result)
                            if pending.end() { derived.finish() }
                        }
                    )
                }
            },
            finished: { derived in
                if pending.sourceFinished() { derived.finish() }
            }
        )
    }

    /// A stream fed by the streams `step` returns for some results (or directly by the result it
    /// returns), all merged as their results arrive. It finishes when this stream and every inner
    /// stream so far have finished.
    func deriveMerging<U: Sendable>(
        on context: any ExecutionContext,
        cancellationToken: CancellationToken,
        _ step: @escaping @Sendable (Result<Value, any Error>) -> MergingStep<U>
    ) -> FutureStream<U> {
        let pending = PendingInner()
        return derive(
            on: context,
            cancellationToken: cancellationToken,
            { result, derived in
                switch step(result) {
                case .now(let result):
                    derived.publish(result)
                case .merge(let inner):
                    pending.start()
                    inner.subscribe(on: .synchronous, cancellationToken: cancellationToken, feedsStream: true) {
                        event in
                        switch event {
                        case .result(let result): derived.publish(result)
                        case .finished: if pending.end() { derived.finish() }
                        case .cancelled: break  // the derived stream was cancelled by the same token
                        }
                    }
                }
            },
            finished: { derived in
                if pending.sourceFinished() { derived.finish() }
            }
        )
    }
}

/// What a combinator does with one result: publish a result now, or the result of a future later.
enum AwaitingStep<Value: Sendable>: Sendable {
    case now(Result<Value, any Error>)
    case later(Future<Value>)
}

/// What a combinator does with one result: publish a result now, or merge in an inner stream.
enum MergingStep<Value: Sendable>: Sendable {
    case now(Result<Value, any Error>)
    case merge(FutureStream<Value>)
}

/// Counts the inner futures or streams a combinator waits for, to finish the derived stream when
/// the source has finished and the last inner one has ended.
final class PendingInner: Sendable {
    private let state = Lock((running: 0, isSourceFinished: false))

    init() {}

    /// An inner future or stream started.
    func start() {
        state.withLock { $0.running += 1 }
    }

    /// An inner one ended; true if the derived stream is done now.
    func end() -> Bool {
        state.withLock { state in
            state.running -= 1
            return state.running == 0 && state.isSourceFinished
        }
    }

    /// The source finished; true if the derived stream is done now.
    func sourceFinished() -> Bool {
        state.withLock { state in
            state.isSourceFinished = true
            return state.running == 0
        }
    }
}
