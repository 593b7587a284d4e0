/// The loop's side of one `for await` over a stream: serves the results it took from its
/// ``StreamIteratorInbox`` (the subscriber, shared with the producer), and waits there when it
/// has none.
///
/// ### Batches
/// With a policy that never drops a result (`.unbounded`, or a limit of `Int.max`), one trip
/// through the inbox's lock takes everything buffered, and `next()` serves it from `batch`, which
/// only the loop touches: no lock, no atomic read-modify-write and no cache line shared with the
/// producer per value. With a bounded policy it takes one result per trip, since a result the
/// loop holds no longer counts towards the limit. What it buys: benchmark 12 ("StreamPromise ->
/// values -> for await" beside `AsyncStream`, `Benchmarks/Rounds/RoundsDriver 9 12`): a loop that
/// took the lock for each value fought the producer for it (`_lockSlow` was a tenth of the time).
/// With this and the specialization (see ``StreamIteratorInbox``), 0.32–0.38× → 0.10–0.14× wall
/// with both cores free, 1.04–1.07× → 0.18–0.22× with one (2026-11-24, 2 cores, `chrt -f 10`).
/// A bounded spin before waiting was tried and made it slower, not faster (loaded machine: 0.26–0.31×
/// without, 0.26–0.35× spinning up to 200 loads, 0.33–0.43× up to 2,000): the loop then catches up
/// with the producer sooner and takes smaller batches.
///
/// Not `Sendable`: it belongs to the iterator, which is not either, so one task at a time calls
/// `next()`. The producer and the task's cancellation handler reach only the inbox.
@usableFromInline
final class StreamIteratorCore<Value: Sendable> {
    @usableFromInline let inbox: StreamIteratorInbox<Value>
    /// Results taken from the inbox and not yet returned, oldest first; the loop's alone.
    /// Unchecked exclusivity: only `next()` and `stop()` touch it, one at a time, never across a
    /// suspension; the runtime's access tracking would cost more than the pop.
    @usableFromInline @exclusivity(unchecked) var batch = FIFO<Result<Value, any Error>>()

    @inlinable
    init(stream: FutureStream<Value>, policy: FutureStream<Value>.BufferingPolicy) {
        inbox = StreamIteratorInbox(stream: stream, policy: policy)
    }

    /// The iterator is gone (the loop ended or was left with `break`): unsubscribe, so that the
    /// stream lets go of the inbox, which its subscription holds.
    deinit {
        inbox.stop()
    }

    /// The next result, or nil when the stream has ended, the iteration was stopped or the task
    /// was cancelled.
    @inlinable
    func next() async -> Result<Value, any Error>? {
        // A cancelled task ends the loop at once, even with results in the batch or buffered, as
        // the inbox's cancellation handler would: it runs at once when the task is already cancelled.
        if Task.isCancelled {
            stop()
            return nil
        }
        if let result = batch.popFirst() { return result }
        switch inbox.take(into: &batch) {
        case true?: return batch.popFirst()
        case false?: return nil
        case nil: return await inbox.wait()
        }
    }

    /// Ends the iteration: drops what the loop took and what is buffered, ends a waiting `next()`
    /// with nil, unsubscribes.
    @inlinable
    func stop() {
        _ = batch.removeAll()
        inbox.stop()
    }
}

@available(*, unavailable)
extension StreamIteratorCore: Sendable {}
