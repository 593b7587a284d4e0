public import FutureLibConcurrencyHelpers  // public: inlinable code uses its lock
public import Synchronization  // public: `isCancelled` is read by inlinable code

/// One subscriber of a stream: its handler, its context, and a mailbox of events not yet
/// delivered.
///
/// Delivery is serial per subscriber, whatever the context: one drain job at a time takes the
/// queued events and runs the handler on them in order, and schedules itself again only when new
/// events arrive after it emptied the mailbox. So a subscriber sees the stream's events in order
/// even on a concurrent context, and a slow subscriber never blocks the producer or the others.
///
/// Inlinable, like ``Future``'s completion path: specialized in the caller, a result reaches its
/// handler without generic metadata lookups (they were a third of the time per event).
@usableFromInline
final class StreamSubscriber<Value: Sendable>: Sendable, Slotted {
    @usableFromInline typealias Handler = @Sendable (StreamEvent<Value>) -> Void

    @usableFromInline
    struct Mailbox: Sendable {
        @usableFromInline var pending: [StreamEvent<Value>] = []
        /// An empty array with the capacity of the last batch, to queue the next results without
        /// allocating.
        @usableFromInline var spare: [StreamEvent<Value>] = []
        /// A drain job is queued or running; it delivers whatever is pending.
        @usableFromInline var isScheduled = false
        /// A terminal event is queued; later events are dropped.
        @usableFromInline var isTerminated = false
        /// The terminal event was delivered, and the handler and registration released.
        @usableFromInline var isReleased = false
        @usableFromInline var handler: Handler?
        @usableFromInline var registration: CancellationRegistration?

        @inlinable
        init(handler: @escaping Handler) {
            self.handler = handler
        }
    }

    @usableFromInline let context: any ExecutionContext
    /// False for a subscriber that waits only for the end (`onFinish`): results are not queued.
    @usableFromInline let wantsResults: Bool
    /// Whether the handler publishes into another stream (a combinator's stage, a forwarding
    /// promise): on `.synchronous` its drains go through the ``Trampoline``, since a chain of them
    /// nests one drain per stage. The others drain inline, as they always did (`stream-publish`).
    @usableFromInline let feedsStream: Bool
    /// Where the stream keeps the subscriber (``Slots``), so that its token's handler removes it
    /// without a scan. A stale slot is harmless: removal checks the subscriber there.
    ///
    /// A `UInt32`, declared here, so that it lands in the padding after `wantsResults`: the object
    /// stays in malloc's 144-byte chunk, where an `Int` would take it to the next one (callgrind
    /// `mallinfo-stream-subscriber`). More than 2³² slots would
    /// take hundreds of gigabytes of subscribers; `placed(at:)` traps rather than wrap.
    // Sendable: read and written only under the lock of the stream that stores the subscriber.
    @usableFromInline nonisolated(unsafe) var slot: UInt32 = 0
    @usableFromInline let mailbox: Lock<Mailbox>
    /// Set by `cancel()`, read before each delivery of a batch already taken. So no result sent
    /// after `cancel()` returned reaches the handler, nor does the rest of a batch being delivered
    /// on another thread; the one result whose delivery had passed this check when `cancel()` ran
    /// may still reach the handler, on that thread, just after `cancel()` returns (not holding a
    /// lock around user code leaves that window; `FutureStreamRaceTests` asserts the rest).
    @usableFromInline let isCancelled = Atomic(false)

    @inlinable
    init(
        context: any ExecutionContext,
        wantsResults: Bool = true,
        feedsStream: Bool = false,
        handler: @escaping Handler
    ) {
        self.context = context
        self.wantsResults = wantsResults
        self.feedsStream = feedsStream
        mailbox = Lock(Mailbox(handler: handler))
    }

    /// Queues `event`; true when the caller must call ``schedule()`` (after releasing its lock).
    @inlinable
    func enqueue(_ event: StreamEvent<Value>) -> Bool {
        if !wantsResults, case .result = event { return false }
        return mailbox.withLock { mailbox in
            guard !mailbox.isTerminated else { return false }
            if event.isTerminal { mailbox.isTerminated = true }
            if mailbox.pending.isEmpty, mailbox.pending.capacity == 0 { swap(&mailbox.pending, &mailbox.spare) }
            mailbox.pending.append(event)
            guard !mailbox.isScheduled else { return false }
            mailbox.isScheduled = true
            return true
        }
    }

    /// Queues `events` in order; true when the caller must call ``schedule()``.
    @inlinable
    func enqueue(contentsOf events: [StreamEvent<Value>]) -> Bool {
        let events = wantsResults ? events : events.filter(\.isTerminal)
        guard !events.isEmpty else { return false }
        return mailbox.withLock { mailbox in
            guard !mailbox.isTerminated else { return false }
            mailbox.pending.append(contentsOf: events)
            if events.last?.isTerminal == true { mailbox.isTerminated = true }
            guard !mailbox.isScheduled else { return false }
            mailbox.isScheduled = true
            return true
        }
    }

    /// Drops the undelivered results and queues `.cancelled`, unless the subscriber already ended:
    /// a `.finished` still queued (its delivery not started) is replaced by `.cancelled` too.
    ///
    /// Inlinable, as ``attach(_:)`` and ``release()`` are: unspecialized, their generic metadata
    /// lookups (`Lock<Mailbox>`, `StreamEvent`, `Mutex`) were most of an unsubscribe, and the
    /// `drain()` they lead to ran unspecialized too (callgrind `stream-unsubscribe-<N>`).
    @inlinable
    func cancel() {
        // The dropped results are released after the lock: they may be user objects with a `deinit`.
        // Kept in a binding: a discarded result (`_`) may be released inside the lock in release builds.
        let (schedule, droppedEvents) = mailbox.withLock { mailbox -> (Bool, [StreamEvent<Value>]) in
            guard !mailbox.isTerminated else {
                // Still queued, so a drain is scheduled to deliver it: a pending event keeps one so.
                guard case .finished? = mailbox.pending.last else { return (false, []) }
                let dropped = mailbox.pending
                mailbox.pending = [.cancelled]
                return (false, dropped)
            }
            mailbox.isTerminated = true
            let dropped = mailbox.pending
            mailbox.pending = [.cancelled]
            if mailbox.isScheduled { return (false, dropped) }
            mailbox.isScheduled = true
            return (true, dropped)
        }
        withExtendedLifetime(droppedEvents) {}
        // Releasing: pairs with the acquiring load in `drain()`.
        isCancelled.store(true, ordering: .releasing)
        if schedule { self.schedule() }
    }

    /// Keeps the token registration to release after the last event; releases it at once if
    /// that already happened.
    @inlinable
    func attach(_ registration: CancellationRegistration) {
        let late = mailbox.withLock { mailbox -> Bool in
            guard !mailbox.isReleased else { return true }
            mailbox.registration = registration
            return false
        }
        if late { registration.unregister() }
    }

    /// Starts a drain job on the context (inline on `.synchronous`; for a subscriber that feeds a
    /// stream, through the ``Trampoline``: a chain of `.synchronous` stages nests a bounded number
    /// of drains, and the outermost frame runs the deeper ones). Never call it with a lock held.
    @inlinable
    func schedule() {
        if context.isSynchronous {
            guard feedsStream else {
                drain()
                return
            }
            if let thread = Trampoline.enterInline() {
                drain()
                Trampoline.leaveInline(thread)
            } else {
                Trampoline.run { [self] in drain() }
            }
        } else {
            context.execute { [self] in drain() }
        }
    }

    // MARK: - Delivery

    @inlinable
    func drain() {
        var batch: [StreamEvent<Value>] = []
        var handler: Handler?
        while takePending(into: &batch, handler: &handler) {
            for event in batch {
                if case .result = event, isCancelled.load(ordering: .acquiring) { continue }
                handler?(event)
                if event.isTerminal { release() }
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Swaps the pending events into `batch` (empty, its storage becomes the new pending queue)
    /// and copies the handler; false (and no longer scheduled) when there are none.
    @inlinable
    func takePending(into batch: inout [StreamEvent<Value>], handler: inout Handler?) -> Bool {
        mailbox.withLock { mailbox in
            guard !mailbox.pending.isEmpty else {
                mailbox.isScheduled = false
                if mailbox.spare.capacity < batch.capacity { swap(&mailbox.spare, &batch) }
                return false
            }
            swap(&batch, &mailbox.pending)
            handler = mailbox.handler
            return true
        }
    }

    /// Tells the subscriber where its stream keeps it; under the stream's lock.
    @inlinable
    func placed(at slot: Int) {
        self.slot = UInt32(slot)
    }

    /// A subscriber is removed by its own identity (its token's handler holds it).
    @inlinable
    func isNamed(by subscriber: StreamSubscriber<Value>) -> Bool {
        self === subscriber
    }

    @inlinable
    static func slot(of subscriber: StreamSubscriber<Value>) -> Int {
        Int(subscriber.slot)
    }

    /// Releases the handler and the token registration after the terminal event.
    ///
    /// Never inlined: inlined into `drain()`'s loop, this once-per-subscriber path cost every
    /// value instructions (callgrind `stream-publish`).
    @inlinable @inline(never)
    func release() {
        // The handler is released after the lock, kept in a binding: a discarded result (`_`) may be
        // released inside the lock in release builds, and its captures' `deinit`s are user code.
        // Copied into a local and cleared, not returned nor `take()`n: a closure that goes through
        // a generic (`withLock`'s result, `Optional.take()`) is reabstracted there and back, which
        // allocated thunks per subscriber (callgrind `stream-lifecycle`).
        var handler: Handler?
        let registration = mailbox.withLock { mailbox in
            mailbox.isReleased = true
            handler = mailbox.handler
            mailbox.handler = nil
            return mailbox.registration.take()
        }
        _ = consume handler  // a closure: `withExtendedLifetime` would allocate a reabstraction thunk
        registration?.unregister()
    }
}
