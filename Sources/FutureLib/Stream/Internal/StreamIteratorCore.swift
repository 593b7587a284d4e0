/// The loop's side of one `for await` over a stream: serves the results it took from its
/// ``StreamIteratorInbox`` (the subscriber, shared with the producer), and waits there when it
/// has none.
///
/// ### Batches
/// With a policy that never drops a result (`.unbounded`, or a limit of `Int.max`), one trip
/// through the inbox's lock takes everything buffered, and `next()` serves it from `batch`, which
/// only the loop touches: no lock, no atomic read-modify-write and no cache line shared with the
/// producer per value. With a bounded policy it takes one result per trip, since a result the
/// loop holds no longer counts towards the limit. What it buys (guarded by `RoundsDriver 12`,
/// "StreamPromise -> values -> for await" beside `AsyncStream`): a loop that takes the lock for
/// each value fights the producer for it. No spin before waiting: the loop would catch up with the
/// producer sooner and take smaller batches (Documentation/Internals.md, "A `for await` loop over a
/// stream").
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
