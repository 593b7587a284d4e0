/// The subscriber behind one `for await` loop over a stream: buffers the results the loop has not
/// asked for yet (by its ``FutureStream/BufferingPolicy``) and hands them to `next()`.
///
/// It subscribes on `.synchronous` with a token of its own, cancelled when the loop's task is
/// cancelled, when the loop stops after an error, or when the iterator is dropped: each of these
/// unsubscribes at once.
final class StreamIteratorCore<Value: Sendable>: Sendable {
    private struct State: Sendable, ~Copyable {
        /// Results not yet taken by the loop. A result leaves the buffer when it is taken, so the
        /// buffer never keeps it alive, and growing or shrinking never releases a user's value
        /// inside the lock.
        var buffer = FIFO<Result<Value, any Error>>()
        /// The stream ended or the iteration was stopped: once `buffer` is drained, `next()` returns nil.
        var isDone = false
        var waiter: CheckedContinuation<Result<Value, any Error>?, Never>?

        var isEmpty: Bool { buffer.isEmpty }
        var count: Int { buffer.count }

        mutating func popFirst() -> Result<Value, any Error>? {
            buffer.popFirst()
        }
    }

    private let state = Lock(State())
    private let subscription = CancellationRequest()
    private let policy: FutureStream<Value>.BufferingPolicy

    init(stream: FutureStream<Value>, policy: FutureStream<Value>.BufferingPolicy) {
        self.policy = policy
        stream.subscribe(on: .synchronous, cancellationToken: subscription.token) { [weak self] event in
            self?.receive(event)
        }
    }

    deinit {
        subscription.cancel()
    }

    // MARK: - From the stream

    private func receive(_ event: StreamEvent<Value>) {
        // A result dropped by the policy is released when this statement ends, outside the lock.
        let (waiter, result, _) = state.withLock {
            state -> (CheckedContinuation<Result<Value, any Error>?, Never>?, Result<Value, any Error>?, Any?) in
            guard !state.isDone else { return (nil, nil, nil) }
            guard case .result(let result) = event else {
                state.isDone = true
                return (state.waiter.take(), nil, nil)
            }
            if let waiter = state.waiter.take() { return (waiter, result, nil) }
            switch policy.limit {
            case nil:
                state.buffer.append(result)
                return (nil, nil, nil)
            case .some(let limit) where state.count < limit:
                state.buffer.append(result)
                return (nil, nil, nil)
            case .some:
                guard policy.keepsNewest, !state.isEmpty else { return (nil, nil, result) }
                let dropped = state.popFirst()
                state.buffer.append(result)
                return (nil, nil, dropped)
            }
        }
        waiter?.resume(returning: result)
    }

    // MARK: - From the loop

    /// The next result, or nil when the stream has ended, the iteration was stopped or the task
    /// was cancelled.
    func next() async -> Result<Value, any Error>? {
        // Fast path: a result is already buffered (the producer is ahead, the common case in a busy
        // loop). Taken with one lock, without the cancellation handler scope (a task status record
        // installed and removed) and the checked continuation (an allocation, a suspension point)
        // that waiting needs. A cancelled task still ends the loop at once, as `onCancel` below
        // would: it runs at once when the task is already cancelled. What it buys: benchmark
        // "12 FutureLib: 100000 values, StreamPromise -> values -> for await" beside "12 Swift: …
        // AsyncStream" (RoundsDriver 12: 1.58× → see Documentation/Performance.md).
        if Task.isCancelled {
            stop()
            return nil
        }
        if let ready = state.withLock({ state -> Result<Value, any Error>?? in
            if let result = state.popFirst() { return .some(result) }
            return state.isDone ? .some(nil) : nil
        }) {
            return ready
        }
        return await waitForNext()
    }

    /// `next()` when nothing is buffered: waits for the stream, or for the task's cancellation.
    private func waitForNext() async -> Result<Value, any Error>? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, any Error>?, Never>) in
                let ready = state.withLock { state -> Result<Value, any Error>?? in
                    if let result = state.popFirst() { return .some(result) }
                    if state.isDone { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            stop()
        }
    }

    /// Ends the iteration: drops what is buffered, ends a waiting `next()` with nil, unsubscribes.
    func stop() {
        // The buffered results are released when `dropped` goes out of scope, outside the lock.
        var dropped = FIFO<Result<Value, any Error>>()
        let waiter = state.withLock { state in
            state.isDone = true
            swap(&dropped, &state.buffer)
            return state.waiter.take()
        }
        waiter?.resume(returning: nil)
        subscription.cancel()
    }
}
