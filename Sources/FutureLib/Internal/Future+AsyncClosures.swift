import FutureLibConcurrencyHelpers
// The shared path of the async-closure forms of the future combinators and continuations (on a
// context, on the main actor, isolated to an actor): each form states where its task starts and
// hands its closure to one of these.

extension Future {
    // Inlinable so that the public async `onComplete` and `onSuccess` (Future+Callbacks.swift) are
    // specialized in the caller, with the continuation and the task body they build.

    @inlinable
    func onComplete(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ f: @escaping @Sendable (Result<Value, any Error>) async -> Void
    ) {
        onComplete(on: .synchronous, cancellationToken: cancellationToken) { result in
            placement.start(cancellationToken: cancellationToken) {
                // Cancelled between the result and the task's start: the token wins, as on a context.
                await f(cancellationToken.isCancellationRequested ? .failure(cancelledFailure) : result)
            }
        }
    }

    @inlinable
    func onSuccess(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ f: @escaping @Sendable (Value) async -> Void
    ) {
        onSuccess(on: .synchronous, cancellationToken: cancellationToken) { value in
            placement.start(cancellationToken: cancellationToken) {
                if !cancellationToken.isCancellationRequested { await f(value) }
            }
        }
    }

    @inlinable
    func onFailure(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        policy: ErrorPolicy,
        _ f: @escaping @Sendable (any Error) async -> Void
    ) {
        onFailure(on: .synchronous, cancellationToken: cancellationToken, policy: policy) { error in
            placement.start(cancellationToken: cancellationToken) {
                // Cancelled between the error and the task's start: the token wins, as on a context.
                await f(cancellationToken.isCancellationRequested ? cancelledFailure : error)
            }
        }
    }
}

extension Result where Success: Sendable, Failure == any Error {
    /// `map`'s step: a failure passes on at once; a value runs `transform` in a task.
    @inlinable
    func asyncStep<U: Sendable>(_ transform: @escaping @Sendable (Success) async throws -> U) -> AsyncStep<U> {
        switch self {
        case .success(let value): .run { try await transform(value) }
        case .failure(let error): .done(.failure(error))
        }
    }

    /// `recover`'s step: a value, or an error `policy` leaves alone, passes on at once; a failure
    /// runs `transform` in a task.
    @inlinable
    func asyncRecoveryStep(
        policy: ErrorPolicy,
        _ transform: @escaping @Sendable (any Error) async throws -> Success
    ) -> AsyncStep<Success> {
        switch self {
        case .failure(let error) where policy.handles(error): .run { try await transform(error) }
        case .success, .failure: .done(self)
        }
    }
}

// MARK: - Streams

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
        let jobs = SerialJobs(placement: placement, cancellationToken: cancellationToken)
        return derive(
            on: .synchronous,
            cancellationToken: cancellationToken,
            { result, derived in
                jobs.enqueue {
                    guard !cancellationToken.isCancellationRequested, let next = await step(result),
                        // Cancelled while `step` ran: the token's one `CancellationError` ends the stream.
                        !cancellationToken.isCancellationRequested
                    else { return }
                    derived.publish(next)
                }
            },
            finished: { derived in jobs.enqueue { derived.finish() } }
        )
    }
}

/// Async jobs run one at a time, in the order they were enqueued: a task at `placement` (cancelled
/// by the token) drains the queue while it is not empty, and the next job starts a new one.
final class SerialJobs: Sendable {
    typealias Job = @Sendable () async -> Void

    private let placement: TaskPlacement
    private let cancellationToken: CancellationToken
    private let state = Lock((jobs: [Job](), isDraining: false))

    init(placement: TaskPlacement, cancellationToken: CancellationToken) {
        self.placement = placement
        self.cancellationToken = cancellationToken
    }

    func enqueue(_ job: @escaping Job) {
        let startsDrain = state.withLock { state in
            state.jobs.append(job)
            guard !state.isDraining else { return false }
            state.isDraining = true
            return true
        }
        if startsDrain { placement.start(cancellationToken: cancellationToken) { await self.drain() } }
    }

    private func drain() async {
        while true {
            // Taken out of the lock as a whole: the jobs (and the user values they hold) are
            // released outside it.
            let jobs = state.withLock { state in
                let jobs = state.jobs
                state.jobs = []
                if jobs.isEmpty { state.isDraining = false }
                return jobs
            }
            if jobs.isEmpty { return }
            for job in jobs { await job() }
        }
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
