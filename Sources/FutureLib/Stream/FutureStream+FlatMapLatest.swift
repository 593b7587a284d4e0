import FutureLibConcurrencyHelpers

// `flatMapLatest`: each value starts an inner stream or future, and only the latest one's
// results are published; starting one cancels the previous one's token.

extension FutureStream {
    /// Continues every value with the stream `transform` returns, and publishes only the latest
    /// one's results: a new value switches to its stream and cancels the previous one's token.
    ///
    /// ```swift
    /// let queries = StreamPromise<String>()
    /// let suggestions = queries.stream.flatMapLatest { query, token -> FutureStream<String> in
    ///     FutureStream(capacity: 1, cancellationToken: token) { query.uppercased() }  // stopped by the next query
    /// }
    /// ```
    ///
    /// ```
    /// source:  a           b           |
    /// inner a:  a1  a2  a3 (left)
    /// inner b:              b1     b2  |
    /// output:   a1  a2      b1     b2  |
    /// ```
    ///
    /// ### Semantics (Futura's and RxSwift's `flatMapLatest`, Combine's `switchToLatest`)
    /// - `transform` runs on `context` once per value, one call at a time, in order, with a token
    ///   of that value's own: it is cancelled when the next value arrives (the inner stream is
    ///   left and its results are no longer published), when `cancellationToken` is, and when
    ///   the new stream ends or is released. Pass it to the work the stream stands for.
    /// - Results of the current inner stream are published as they arrive, starting with the
    ///   ones it keeps. Errors of this stream pass through; a throw of `transform` is published
    ///   as an error.
    /// - It finishes when this stream and the current inner stream have finished.
    /// - `cancellationToken` cancelled: one `CancellationError`, the end; this stream and the
    ///   inner one are left.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Returns the stream for a value; its token is cancelled when it is replaced.
    /// - Returns: A stream of the latest inner stream's results.
    public func flatMapLatest<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Value, CancellationToken) throws -> FutureStream<U>
    ) -> FutureStream<U> {
        deriveLatest(on: context, cancellationToken: cancellationToken) { value, token in
            .stream(try transform(value, token))
        }
    }

    /// Continues every value with the future `transform` returns, and publishes only the latest
    /// one's result: a new value cancels the previous future's token, and its result is dropped.
    ///
    /// ```swift
    /// let selection = StreamPromise<Int>()
    /// let names = selection.stream.flatMapLatest { id, token in
    ///     Future(cancellationToken: token) {  // cancelled when the selection changes
    ///         try await Task.sleep(for: .milliseconds(100))
    ///         return "user \(id)"
    ///     }
    /// }
    /// ```
    ///
    /// ```
    /// source:  1      2        |
    /// future 1:  (dropped)
    /// future 2:         "b"
    /// output:           "b"    |
    /// ```
    ///
    /// ### Semantics
    /// As the stream form: the new stream finishes when this stream has finished and the latest
    /// future has completed (or been replaced).
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Starts the work for a value; its token is cancelled when it is replaced.
    /// - Returns: A stream of the latest futures' results.
    public func flatMapLatest<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Value, CancellationToken) throws -> Future<U>
    ) -> FutureStream<U> {
        deriveLatest(on: context, cancellationToken: cancellationToken) { value, token in
            .future(try transform(value, token))
        }
    }

    /// Continues every value with the stream `transform`, called on the main actor, returns;
    /// only the latest one's results are published.
    ///
    /// ```swift
    /// @MainActor final class SearchScreen {
    ///     var scope = "all"
    ///     func results(_ queries: FutureStream<String>) -> FutureStream<String> {
    ///         queries.flatMapLatest(on: .mainActor) { query, _ -> FutureStream<String> in
    ///             FutureStream(value: "\(self.scope): \(query)")
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Returns the stream for a value; its token is cancelled when it is replaced.
    /// - Returns: A stream of the latest inner stream's results.
    public func flatMapLatest<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value, CancellationToken) throws -> FutureStream<U>
    ) -> FutureStream<U> {
        flatMapLatest(on: context.queue, cancellationToken: cancellationToken) { value, token -> FutureStream<U> in
            try MainActor.assumeIsolated { try transform(value, token) }
        }
    }

    /// Continues every value with the future `transform`, called on the main actor, returns;
    /// only the latest one's result is published.
    ///
    /// ```swift
    /// @MainActor final class Detail {
    ///     var prefix = "user "
    ///     func names(_ ids: FutureStream<Int>) -> FutureStream<String> {
    ///         ids.flatMapLatest(on: .mainActor) { id, _ -> Future<String> in Future(value: self.prefix + "\(id)") }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Starts the work for a value; its token is cancelled when it is replaced.
    /// - Returns: A stream of the latest futures' results.
    public func flatMapLatest<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value, CancellationToken) throws -> Future<U>
    ) -> FutureStream<U> {
        flatMapLatest(on: context.queue, cancellationToken: cancellationToken) { value, token -> Future<U> in
            try MainActor.assumeIsolated { try transform(value, token) }
        }
    }

}

// MARK: - Async closures, on the main actor, isolated to an actor

// The async closure is the inner work itself: each value runs it in a task (on FutureLib's
// threads or the context's, on the main actor, or isolated to an actor) with a token of that
// value's own, and a newer value cancels that token, and so the task, then runs its own call.

extension FutureStream {
    /// Runs async `transform` for every value, and publishes only the latest call's result: a new
    /// value cancels the running call's token (and its task), and its own call follows it.
    ///
    /// ```swift
    /// let queries = StreamPromise<String>()
    /// let results = queries.stream.flatMapLatest { query, _ in
    ///     try await Task.sleep(for: .milliseconds(100))  // a search request, say; cancelled by the next query
    ///     return "results for \(query)"
    /// }
    /// ```
    ///
    /// ```
    /// source:  a     b              |
    /// call a:  ---(cancelled)
    /// call b:        -------"b"
    /// output:               "b"     |
    /// ```
    ///
    /// ### Semantics
    /// As the future form (`transform` returning a `Future`), with the async closure as the inner
    /// work: each call runs in a task, with a token that is cancelled (and the task with it) when
    /// the next value arrives, when `cancellationToken` is, and when the new stream ends or is
    /// released. Calls run one at a time, in order: the next value's call starts once the call it
    /// replaced has returned (as Kotlin's `mapLatest` joins the block it cancels), and a value
    /// replaced before its call started is not called. What a replaced call returns or throws is
    /// dropped; a throw of the latest call is published as an error. The new stream finishes when
    /// this stream has finished and the latest call has returned.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the running call and finishes the new stream.
    ///   - transform: The work for a value; its token (and task) is cancelled when it is replaced.
    /// - Returns: A stream of the latest calls' results.
    public func flatMapLatest<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable @concurrent (Value, CancellationToken) async throws -> U
    ) -> FutureStream<U> {
        flatMapLatest(at: .on(context), cancellationToken: cancellationToken) { value, token in
            try await transform(value, token)
        }
    }

    /// Runs async `transform` for every value in a task on the main actor, and publishes only the
    /// latest call's result: a new value cancels the previous call.
    ///
    /// ```swift
    /// @MainActor final class SearchField {
    ///     var scope = "all"
    ///     func results(_ queries: FutureStream<String>) -> FutureStream<String> {
    ///         queries.flatMapLatest(on: .mainActor) { query, _ in
    ///             try await Task.sleep(for: .milliseconds(100))
    ///             return "\(self.scope): \(query)"
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the running call and finishes the new stream.
    ///   - transform: The work for a value; its token (and task) is cancelled when it is replaced.
    /// - Returns: A stream of the latest calls' results.
    public func flatMapLatest<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value, CancellationToken) async throws -> U
    ) -> FutureStream<U> {
        flatMapLatest(at: .mainActor, cancellationToken: cancellationToken) { value, token in
            try await transform(value, token)
        }
    }

    /// Runs async `transform`, isolated to `actor`, for every value, and publishes only the latest
    /// call's result: a new value cancels the previous call.
    ///
    /// ```swift
    /// actor Catalog {
    ///     var prices = ["tea": 3]
    ///     func quotes(_ items: FutureStream<String>) -> FutureStream<Int> {
    ///         items.flatMapLatest(on: self) { catalog, item, _ in
    ///             await Task.yield()
    ///             return catalog.prices[item] ?? 0
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `transform` is isolated to.
    ///   - cancellationToken: Cancels the running call and finishes the new stream.
    ///   - transform: The work for a value, its first parameter `actor`, isolated; its token (and
    ///     task) is cancelled when it is replaced.
    /// - Returns: A stream of the latest calls' results.
    public func flatMapLatest<A: Actor, U: Sendable>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (isolated A, Value, CancellationToken) async throws -> U
    ) -> FutureStream<U> {
        flatMapLatest(at: .pool, cancellationToken: cancellationToken) { value, token in
            try await transform(actor, value, token)
        }
    }

    /// The async forms' one path: each call is a future of its own, completed by its task, and
    /// switched to as the future form switches. A call's task first waits until the call it
    /// replaced has returned (that one's token is cancelled by then), so calls never overlap.
    func flatMapLatest<U: Sendable>(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ transform: @escaping @Sendable (Value, CancellationToken) async throws -> U
    ) -> FutureStream<U> {
        // The end of the latest call so far; `deriveLatest`'s closure, which alone touches it,
        // runs one value at a time, in order.
        let latestCallEnd = StageBox<Future<Void>?>(nil)
        return deriveLatest(on: .synchronous, cancellationToken: cancellationToken) { value, token in
            let call = Future<U>()
            let callEnd = Future<Void>()
            let replaced = latestCallEnd.value
            latestCallEnd.value = callEnd
            placement.start(cancellationToken: token) {
                if let replaced { await replaced.ended() }
                let result: Result<U, any Error>
                if token.isCancellationRequested {
                    result = .failure(cancelledFailure)  // replaced before it started: not called
                } else {
                    do {
                        result = .success(try await transform(value, token))
                    } catch {
                        result = .failure(error)
                    }
                }
                call.complete(with: result)
                callEnd.complete(with: .success(()))
            }
            return .future(call)
        }
    }
}

extension FutureStream {
    /// The path of both `flatMapLatest`s: `start` gives the inner stream or future for a value
    /// and its token; the previous inner one's token is cancelled first.
    func deriveLatest<U: Sendable>(
        on context: any ExecutionContext,
        cancellationToken: CancellationToken,
        _ start: @escaping @Sendable (Value, CancellationToken) throws -> LatestInner<U>
    ) -> FutureStream<U> {
        let latest = LatestSwitch()
        let derived: FutureStream<U> = derive(
            on: context,
            cancellationToken: cancellationToken,
            { result, derived in
                let value: Value
                switch result {
                case .success(let success): value = success
                case .failure(let error):
                    derived.publish(.failure(error))
                    return
                }
                let request = CancellationRequest(linkedTo: [cancellationToken])
                let (previous, generation) = latest.switchTo(request)
                previous?.cancel()  // outside the lock: it runs the previous subscription's handlers
                let inner: LatestInner<U>
                do {
                    inner = try start(value, request.token)
                } catch {
                    derived.publish(.failure(error))
                    if latest.innerEnded(generation) { derived.finish() }
                    return
                }
                switch inner {
                case .stream(let stream):
                    stream.subscribe(on: .synchronous, cancellationToken: request.token, feedsStream: true) {
                        [weak derived] (event: StreamEvent<U>) in
                        guard let derived else { return }
                        switch event {
                        case .result(let innerResult): if latest.isCurrent(generation) { derived.publish(innerResult) }
                        case .finished: if latest.innerEnded(generation) { derived.finish() }
                        case .cancelled: break  // replaced, or the stream ended
                        }
                    }
                case .future(let future):
                    future.observe(
                        on: .synchronous,
                        cancellationToken: request.token,
                        .result { [weak derived] (innerResult: Result<U, any Error>) in
                            guard let derived, latest.isCurrent(generation) else { return }
                            if !request.token.isCancellationRequested { derived.publish(innerResult) }
                            if latest.innerEnded(generation) { derived.finish() }
                        }
                    )
                }
            },
            finished: { derived in
                if latest.sourceFinished() { derived.finish() }
            }
        )
        // However it ends (finished, cancelled, released), the current inner one is left.
        derived.onEnd { latest.end()?.cancel() }
        return derived
    }
}

/// What `flatMapLatest`'s closure started for a value.
enum LatestInner<Value: Sendable>: Sendable {
    case stream(FutureStream<Value>)
    case future(Future<Value>)
}

/// `flatMapLatest`'s state: the current inner one (its request and generation), and whether
/// the source and it have ended.
final class LatestSwitch: Sendable {
    private struct State: Sendable {
        var current: CancellationRequest?
        var generation = 0
        var isInnerRunning = false
        var isSourceFinished = false
    }

    private let state = Lock(State())

    init() {}

    /// Makes `request` the current inner one's; returns the previous one's, to cancel.
    func switchTo(_ request: CancellationRequest) -> (previous: CancellationRequest?, generation: Int) {
        state.withLock { state in
            defer { state.current = request }
            state.generation += 1
            state.isInnerRunning = true
            return (state.current, state.generation)
        }
    }

    func isCurrent(_ generation: Int) -> Bool {
        state.withLock { $0.generation == generation && $0.isInnerRunning }
    }

    /// The inner one of `generation` ended; true when the new stream is done now.
    func innerEnded(_ generation: Int) -> Bool {
        state.withLock { state in
            guard state.generation == generation, state.isInnerRunning else { return false }
            state.isInnerRunning = false
            state.current = nil
            return state.isSourceFinished
        }
    }

    /// The source finished; true when the new stream is done now.
    func sourceFinished() -> Bool {
        state.withLock { state in
            state.isSourceFinished = true
            return !state.isInnerRunning
        }
    }

    /// The new stream ended: returns the current inner one's request, to cancel.
    func end() -> CancellationRequest? {
        state.withLock { state in
            state.isInnerRunning = false
            return state.current.take()
        }
    }
}

extension Future where Value == Void {
    /// Suspends until this future has completed, however the task's cancellation stands: a
    /// `flatMapLatest` call waits so for the one it replaced, cancelled by then, to return.
    fileprivate func ended() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            onComplete(on: .synchronous) { _ in continuation.resume() }
        }
    }
}
