import FutureLibConcurrencyHelpers

// `buffer`: a bounded queue, with a policy, between a fast producer and a slow consumer.

extension FutureStream {
    /// Queues the results for a slower consumer, at most as many as `policy` allows, and hands
    /// them on one at a time from `context`.
    ///
    /// A producer never waits for a stream's subscribers: a slow one's results queue up without
    /// bound. Subscribe the slow consumer on `.synchronous` to the buffered stream: its handler
    /// then runs on `context`, one result at a time, and the results that arrive meanwhile wait
    /// in this buffer, whose size and policy you choose.
    ///
    /// ```swift
    /// let frames = StreamPromise<Int>(capacity: 0)
    /// frames.stream
    ///     .buffer(.bufferingNewest(3), on: .default)
    ///     .onSuccess(on: .synchronous) { frame in print(frame) }  // slow work, on `.default`
    /// ```
    ///
    /// ```
    /// source:   1 2 3 4 5 6 |          (.bufferingNewest(3), a consumer busy with 1)
    /// buffer:     2 23 234 345 456
    /// output:   1 (busy)     4  5  6 |
    /// ```
    ///
    /// ### Semantics (the policies of `AsyncStream` and of ``values(buffering:)``)
    /// - `.bufferingNewest(n)`: when `n` results wait, a new one drops the oldest waiting one.
    ///   `.bufferingOldest(n)`: the new one is dropped. `.unbounded`: nothing is dropped. `n` less
    ///   than 1 counts as 1. Errors are results: they wait, and count, like values.
    /// - One result at a time is published, from a job on `context`; the next one waits until
    ///   publishing the last one returned (which includes running the `.synchronous`
    ///   subscribers' handlers).
    /// - When this stream finishes, the waiting results are handed on, then the end.
    /// - `cancellationToken` cancelled: the waiting results are dropped, and the new stream gets
    ///   one `CancellationError` and the end.
    ///
    /// - Parameters:
    ///   - policy: How many results may wait, and which to drop when that many do.
    ///   - context: Where the results are handed on. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of the results, bounded by `policy` for a slow consumer.
    public func buffer(
        _ policy: BufferingPolicy,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<Value> {
        let queue = BufferQueue<Value>(policy: policy)
        let context: any ExecutionContext = context
        @Sendable func drain(_ buffered: FutureStream<Value>) {
            while let next = queue.next() {
                switch next {
                case .result(let result): buffered.publish(result)
                case .finish: buffered.finish()
                }
            }
        }
        let buffered: FutureStream<Value> = derive(
            on: .synchronous,
            cancellationToken: cancellationToken,
            { result, buffered in
                let (startsDrain, dropped) = queue.append(result)
                withExtendedLifetime(dropped) {}
                if startsDrain { context.execute { drain(buffered) } }
            },
            finished: { buffered in
                if queue.finish() { context.execute { drain(buffered) } }
            }
        )
        buffered.onEnd { withExtendedLifetime(queue.end()) {} }
        return buffered
    }
}

/// `buffer`'s queue: the waiting results under a lock, and whether a drain job is handing them on.
final class BufferQueue<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var waiting = WaitingValues<Result<Value, any Error>>()
        var isDraining = false
        var isSourceFinished = false
        var isDone = false
    }

    private let limit: Int?
    private let keepsNewest: Bool
    private let state = Lock(State())

    init(policy: FutureStream<Value>.BufferingPolicy) {
        limit = policy.limit
        keepsNewest = policy.keepsNewest
    }

    /// Queues `result` by the policy; returns whether to start a drain job, and the result
    /// dropped (to release outside the lock).
    func append(_ result: Result<Value, any Error>) -> (startsDrain: Bool, dropped: Result<Value, any Error>?) {
        state.withLock { state in
            guard !state.isDone else { return (false, result) }
            var dropped: Result<Value, any Error>?
            if let limit, state.waiting.count >= limit {
                guard keepsNewest else { return (false, result) }
                dropped = state.waiting.popFirst()
            }
            state.waiting.append(result)
            guard !state.isDraining else { return (false, dropped) }
            state.isDraining = true
            return (true, dropped)
        }
    }

    /// The source finished; true when a drain job must start to hand on the end.
    func finish() -> Bool {
        state.withLock { state in
            guard !state.isDone else { return false }
            state.isSourceFinished = true
            guard !state.isDraining else { return false }
            state.isDraining = true
            return true
        }
    }

    /// The next thing a drain job hands on; nil when there is none (the job ends).
    func next() -> StageOutput<Value>? {
        state.withLock { state in
            if !state.isDone, let result = state.waiting.popFirst() { return .result(result) }
            if !state.isDone, state.isSourceFinished {
                state.isDone = true
                return .finish
            }
            state.isDraining = false
            return nil
        }
    }

    /// The new stream ended: returns the waiting results, to release outside the lock.
    func end() -> WaitingValues<Result<Value, any Error>> {
        state.withLock { state in
            state.isDone = true
            defer { state.waiting = WaitingValues() }
            return state.waiting
        }
    }
}
