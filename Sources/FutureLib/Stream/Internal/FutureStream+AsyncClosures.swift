// The shared path of the async-closure forms of the stream operators and continuations (on a
// context, on the main actor, isolated to an actor): each form states where its task starts and
// hands its closure to one of these, which deliver the stream's events one at a time (`SerialJobs`).

extension FutureStream {
    /// Subscribes `handler`, which gets this stream's events one at a time, in order, each awaited
    /// before the next (``SerialJobs``). Results not yet delivered when the token fires are
    /// dropped; `.cancelled` then follows.
    func subscribe(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        wantsResults: Bool = true,
        _ handler: @escaping @Sendable (StreamEvent<Value>) async -> Void
    ) {
        let jobs = SerialJobs(placement: placement, cancellationToken: cancellationToken)
        subscribe(on: .synchronous, cancellationToken: cancellationToken, wantsResults: wantsResults) { event in
            jobs.enqueue {
                if case .result = event, cancellationToken.isCancellationRequested { return }
                await handler(event)
            }
        }
    }

    /// ``derive(on:cancellationToken:_:finished:)`` for the async forms: the new stream gets what
    /// async `step` gives for each result of this stream (nothing, or a result), awaited in order
    /// (``SerialJobs``), and finishes after the last one.
    func deriveAsync<U: Sendable>(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ step: @escaping @Sendable (Result<Value, any Error>) async -> Result<U, any Error>?
    ) -> FutureStream<U> {
        deriveAsync(at: placement, cancellationToken: cancellationToken) { result, stage in
            if let next = await step(result) { stage.publish(next) }
        }
    }

    /// ``derive(on:cancellationToken:_:finished:)`` for the async forms of the operators that
    /// keep a running state or end early (`scan`, `prefix(while:)`, …): async `step` gets each
    /// result of this stream and the new stream, one call at a time, in order, each awaited
    /// (``SerialJobs``), so state it keeps in a ``StageBox`` is never touched by two calls at once.
    /// The new stream finishes after the last call.
    func deriveAsync<U: Sendable>(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ step: @escaping @Sendable (Result<Value, any Error>, AsyncStage<U>) async -> Void
    ) -> FutureStream<U> {
        let jobs = SerialJobs(placement: placement, cancellationToken: cancellationToken)
        return derive(
            on: .synchronous,
            cancellationToken: cancellationToken,
            { result, derived in
                let stage = AsyncStage(stream: derived, cancellationToken: cancellationToken)
                jobs.enqueue {
                    guard !cancellationToken.isCancellationRequested else { return }
                    await step(result, stage)
                }
            },
            finished: { derived in jobs.enqueue { derived.finish() } }
        )
    }
}

/// What an async operator's step publishes into: its new stream, unless the token was cancelled
/// while the step ran (the token's one `CancellationError` ends the stream then).
struct AsyncStage<Value: Sendable>: Sendable {
    let stream: FutureStream<Value>
    let cancellationToken: CancellationToken

    func publish(_ result: Result<Value, any Error>) {
        guard !cancellationToken.isCancellationRequested else { return }
        stream.publish(result)
    }

    /// Ends the new stream early and leaves the source (`prefix(while:)`).
    func finishAndDetach() {
        stream.finishAndDetach()
    }
}

extension FutureStream {
    func onComplete(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ f: @escaping @Sendable (Result<Value, any Error>) async -> Void
    ) {
        subscribe(at: placement, cancellationToken: cancellationToken) { event in
            switch event {
            case .result(let result): await f(result)
            case .cancelled: await f(.failure(cancelledFailure))
            case .finished: break
            }
        }
    }

    func onSuccess(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ f: @escaping @Sendable (Value) async -> Void
    ) {
        subscribe(at: placement, cancellationToken: cancellationToken) { event in
            if case .result(.success(let value)) = event { await f(value) }
        }
    }

    func onFailure(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        policy: ErrorPolicy,
        _ f: @escaping @Sendable (any Error) async -> Void
    ) {
        subscribe(at: placement, cancellationToken: cancellationToken) { event in
            switch event {
            case .result(.failure(let error)) where policy.handles(error): await f(error)
            case .cancelled: await f(cancelledFailure)
            case .result, .finished: break
            }
        }
    }

    func onFinish(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ f: @escaping @Sendable () async -> Void
    ) {
        subscribe(at: placement, cancellationToken: cancellationToken, wantsResults: false) { event in
            if case .finished = event { await f() }
        }
    }

    func map<U: Sendable>(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ transform: @escaping @Sendable (Value) async throws -> U
    ) -> FutureStream<U> {
        deriveAsync(at: placement, cancellationToken: cancellationToken) { result in
            switch result {
            case .success(let value):
                do {
                    return .success(try await transform(value))
                } catch {
                    return .failure(error)
                }
            case .failure(let error):
                return .failure(error)
            }
        }
    }

    func recover(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        policy: ErrorPolicy,
        _ transform: @escaping @Sendable (any Error) async throws -> Value
    ) -> FutureStream<Value> {
        deriveAsync(at: placement, cancellationToken: cancellationToken) { result in
            guard case .failure(let error) = result, policy.handles(error) else { return result }
            do {
                return .success(try await transform(error))
            } catch {
                return .failure(error)
            }
        }
    }
}
