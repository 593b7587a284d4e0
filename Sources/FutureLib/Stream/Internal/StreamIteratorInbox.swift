public import FutureLibConcurrencyHelpers  // public: inlinable code uses its lock

/// The subscriber behind one `for await` loop over a stream: buffers the results the loop has not
/// taken yet (by its ``FutureStream/BufferingPolicy``) and wakes the loop when it waits.
///
/// It subscribes on `.synchronous` with a token of its own, cancelled when the loop's task is
/// cancelled, when the loop stops after an error, or when the iterator is dropped: each of these
/// unsubscribes at once, and the stream then lets go of the inbox. The loop's side, which serves what it took from here, is
/// ``StreamIteratorCore``.
///
/// Inlinable, with the core: specialized in the client, a result reaches the loop without the
/// generic metadata lookups that unspecialized code makes per value (`RoundsDriver 12`).
@usableFromInline
final class StreamIteratorInbox<Value: Sendable>: Sendable {
    @usableFromInline
    struct State: Sendable, ~Copyable {
        /// Results not yet taken by the loop. A result leaves the buffer when it is taken, so the
        /// buffer never keeps it alive, and growing or shrinking never releases a user's value
        /// inside the lock.
        @usableFromInline var buffer = FIFO<Result<Value, any Error>>()
        /// The stream ended or the iteration was stopped: once `buffer` is drained, `next()` returns nil.
        @usableFromInline var isDone = false
        /// The loop's `next()`, suspended until a result or the end arrives. Unsafe rather than
        /// checked: taking it out of the state under the lock is what makes its one resumption
        /// exactly once, and a checked one allocates a canary on every wait (`RoundsDriver 12`).
        @usableFromInline var waiter: UnsafeContinuation<Result<Value, any Error>?, Never>?

        @inlinable
        init() {}
    }

    @usableFromInline let state = Lock(State())
    @usableFromInline let subscription = CancellationRequest()
    /// How many results wait at most; `Int.max` for a policy that never drops one.
    @usableFromInline let limit: Int
    /// Which results go when `limit` are waiting: the oldest (true) or the new one.
    @usableFromInline let keepsNewest: Bool

    @inlinable
    init(stream: FutureStream<Value>, policy: FutureStream<Value>.BufferingPolicy) {
        limit = policy.limit ?? .max
        keepsNewest = policy.keepsNewest
        // Strong: the loop's side stops the subscription when the iterator is dropped
        // (`StreamIteratorCore.deinit`), which releases this handler. A weak reference would give
        // the inbox a side table, and every retain and release of it the slow path, on each value
        // (`RoundsDriver 12`).
        stream.subscribe(on: .synchronous, cancellationToken: subscription.token) { [self] event in
            receive(event)
        }
    }

    /// Whether the loop may take every buffered result at once: only when no policy can drop
    /// one, since results the loop has taken no longer count towards `limit`.
    @inlinable
    var takesBatches: Bool { limit == .max }

    // MARK: - From the stream

    @inlinable
    func receive(_ event: StreamEvent<Value>) {
        typealias Waiter = UnsafeContinuation<Result<Value, any Error>?, Never>
        // A result dropped by the policy is released after the lock, kept in a binding: a discarded
        // result (`_`) may be released inside the lock in release builds.
        let (waiter, result, dropped) = state.withLock {
            state -> (Waiter?, Result<Value, any Error>?, Result<Value, any Error>?) in
            guard !state.isDone else { return (nil, nil, nil) }
            guard case .result(let result) = event else {
                state.isDone = true
                return (state.waiter.take(), nil, nil)
            }
            if let waiter = state.waiter.take() { return (waiter, result, nil) }
            if state.buffer.count < limit {
                state.buffer.append(result)
                return (nil, nil, nil)
            }
            guard keepsNewest, !state.buffer.isEmpty else { return (nil, nil, result) }
            let dropped = state.buffer.popFirst()
            state.buffer.append(result)
            return (nil, nil, dropped)
        }
        withExtendedLifetime(dropped) {}
        waiter?.resume(returning: result)
    }

    // MARK: - From the loop

    /// Moves buffered results into `batch` (empty) in one trip through the lock: all of them
    /// when ``takesBatches``, else the oldest. True when it moved some, false when none are left
    /// and the iteration is over, nil when none have arrived yet.
    @inlinable
    func take(into batch: inout FIFO<Result<Value, any Error>>) -> Bool? {
        state.withLock { state -> Bool? in
            guard !state.buffer.isEmpty else { return state.isDone ? false : nil }
            if takesBatches {
                // The two buffers trade places: the producer goes on appending to the storage the
                // loop has just emptied, so neither side allocates once both have grown.
                swap(&state.buffer, &batch)
            } else {
                batch.append(state.buffer.popFirst().unsafelyUnwrapped)
            }
            return true
        }
    }

    /// Waits for the next result, the end (nil) or the task's cancellation (nil); for a loop that
    /// found nothing buffered.
    @inlinable
    func wait() async -> Result<Value, any Error>? {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Result<Value, any Error>?, Never>) in
                let ready = state.withLock { state -> Result<Value, any Error>?? in
                    if let result = state.buffer.popFirst() { return .some(result) }
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
    @inlinable
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
