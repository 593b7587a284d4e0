public import FutureLibConcurrencyHelpers  // public: inlinable code uses its lock

// What the stream operators share beyond `derive`: a stage fed by several sources (merge, zip,
// combineLatest), a stage that ends before its source (prefix), and leaving a source.

extension FutureStream {
    /// A closure that removes `subscriber` from this stream: a stage's way out of its source, run
    /// when the stage is released or ends early.
    @usableFromInline
    func leaving(_ subscriber: StreamSubscriber<Value>) -> @Sendable () -> Void {
        { [weak self] in
            subscriber.cancel()  // ends it on its context, which releases its token registration
            guard let source = self else { return }
            source.unsubscribe(subscriber)
            // This may be the last reference to a source that is a stage too: released
            // through the queue, so that a chain of stages is released iteratively.
            // (`consume`: no copy of it may be released after the call.)
            if source.isStage { DeferredRelease.release(consume source) }
        }
    }

    /// Stores how this stage leaves its sources (run when it is released); runs it at once when
    /// the stage has ended already (a `prefix` satisfied by the kept results).
    @usableFromInline
    func installDetach(_ detach: @escaping @Sendable () -> Void) {
        let hasEnded = state.withLock { state -> Bool in
            guard !state.isFinished else { return true }
            state.detach = detach
            return false
        }
        if hasEnded { detach() }
    }

    /// Finishes this stage before its source does and leaves the source at once (`prefix`,
    /// `zip` once an input is exhausted): nothing of it stays subscribed.
    @usableFromInline
    func finishAndDetach() {
        finish()
        if let detach = state.withLock({ $0.detach.take() }) { detach() }
    }

    /// A new stage for an operator with several sources: a stream that keeps itself alive while
    /// it has subscribers (``isStage``), cancelled by `cancellationToken` (a `CancellationError`,
    /// then the end; already, when the token is).
    @inlinable
    static func makeStage(capacity: Int, cancellationToken: CancellationToken) -> FutureStream<Value> {
        let stage = FutureStream(capacity: capacity, isStage: true)
        if stage.failIfCancelled(cancellationToken) { return stage }
        if cancellationToken.canBeCancelled {
            stage.releaseOnFinish(cancellationToken.onCancel { [weak stage] in stage?.cancelAndFinish() })
        }
        return stage
    }

    /// Subscribes `stage` to this stream: `handler` gets each result and the end, one at a time,
    /// in order, on the publishing thread, while the stage lives (it is held weakly). Results
    /// queued when `cancellationToken` fires are dropped. Returns how to leave this stream (nil
    /// when it had finished: nothing stays subscribed).
    @inlinable
    func feed<U: Sendable>(
        _ stage: FutureStream<U>,
        on context: any ExecutionContext = .synchronous,
        cancellationToken: CancellationToken,
        _ handler: @escaping @Sendable (StreamEvent<Value>, FutureStream<U>) -> Void
    ) -> (@Sendable () -> Void)? {
        let subscriber = subscribe(on: context, cancellationToken: cancellationToken, feedsStream: true) {
            [weak stage] event in
            guard let stage else { return }  // released: nothing can observe it
            if case .result = event, cancellationToken.isCancellationRequested { return }
            handler(event, stage)
        }
        return subscriber.map { leaving($0) }
    }
}

/// Where several threads (sources, timers, a token) drive one stage: its state, under a lock,
/// and the results it decided to publish, which go out in the order they were decided, outside
/// the lock, from one thread at a time (the one that found the outbox idle).
///
/// The pattern of swift-async-algorithms' state machines: an event mutates the state under the
/// lock and says what to do; the caller does it after the lock is released.
///
/// Inlinable, as the operators built on it are (`zip`, `combineLatest`): specialized in the
/// client, an event looks up no generic metadata.
@usableFromInline
final class StageMachine<State: Sendable, Output: Sendable>: Sendable {
    @usableFromInline
    struct Core: Sendable {
        @usableFromInline var state: State
        @usableFromInline var outbox: [StageOutput<Output>] = []
        @usableFromInline var isEmitting = false

        @inlinable
        init(state: State) {
            self.state = state
        }
    }

    @usableFromInline let core: Lock<Core>

    @inlinable
    init(_ state: State) {
        core = Lock(Core(state: state))
    }

    /// Runs `event` on the state under the lock; what it appends to its outbox is published to
    /// `stage` (in order with every other event's) before this returns or by the thread already
    /// publishing. Returns what `event` returns, for the caller to act on (a timer to stop).
    @inlinable @discardableResult
    func handle<R: Sendable>(
        _ stage: FutureStream<Output>?,
        _ event: (inout State, inout [StageOutput<Output>]) -> R
    ) -> R {
        let (action, emits) = core.withLock { core -> (R, Bool) in
            let action = event(&core.state, &core.outbox)
            guard !core.isEmitting, !core.outbox.isEmpty else { return (action, false) }
            core.isEmitting = true
            return (action, true)
        }
        if emits { emit(to: stage) }
        return action
    }

    /// As ``handle(_:_:)``, for the event that ends a timed stage and gives back the timer it held:
    /// the timer is stopped (outside the lock) before the outbox, with the end, is published, so code
    /// that sees the stream end sees no timer of this stage left on its clock.
    @inlinable
    func finish(
        _ stage: FutureStream<Output>?,
        _ event: (inout State, inout [StageOutput<Output>]) -> (any ClockTimer)?
    ) {
        let (timer, emits) = core.withLock { core -> ((any ClockTimer)?, Bool) in
            let timer = event(&core.state, &core.outbox)
            guard !core.isEmitting, !core.outbox.isEmpty else { return (timer, false) }
            core.isEmitting = true
            return (timer, true)
        }
        timer?.cancel()
        if emits { emit(to: stage) }
    }

    /// Publishes the outbox until it is empty; the results are released outside the lock.
    @inlinable
    func emit(to stage: FutureStream<Output>?) {
        var batch: [StageOutput<Output>] = []
        while true {
            core.withLock { core in
                swap(&batch, &core.outbox)
                if batch.isEmpty { core.isEmitting = false }
            }
            if batch.isEmpty { return }
            for output in batch {
                switch output {
                case .result(let result): stage?.publish(result)
                case .finish: stage?.finishAndDetach()
                }
            }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

/// Whether a clock at `now` can tick again: at the end of a clock's time (`.seconds(Int64.max)`,
/// where ``ManualClock`` stops) the next tick would be due at once, for ever (`interval`, timed
/// `chunks`).
@usableFromInline
func hasTimeLeft(_ now: Duration) -> Bool {
    now < Duration.endOfTime
}

/// What a ``StageMachine`` publishes: a result, or the end of its stage.
@usableFromInline
enum StageOutput<Output: Sendable>: Sendable {
    case result(Result<Output, any Error>)
    case finish
}

/// A first-in, first-out queue of values waiting for a partner (`zip`) or a slot (`buffer`).
@usableFromInline
struct WaitingValues<Element: Sendable>: Sendable {
    @usableFromInline var storage: [Element] = []
    @usableFromInline var head = 0

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { head == storage.count }
    @inlinable
    var count: Int { storage.count - head }

    @inlinable
    mutating func append(_ element: Element) {
        storage.append(element)
    }

    @inlinable
    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    @inlinable
    mutating func popLast() -> Element? {
        guard head < storage.count else { return nil }
        return storage.removeLast()
    }

    @inlinable
    mutating func removeAll() {
        storage = []
        head = 0
    }
}

/// The running state of a one-source operator (`scan`'s total, `removeDuplicates`' last value).
// Sendable: read and written only by the operator's closure, which its stage's subscriber calls
// one call at a time, each after the previous one returned (the subscriber's mailbox lock orders
// the calls, on whatever threads they run; for the async forms, `SerialJobs`' lock orders them).
@usableFromInline
final class StageBox<Value>: @unchecked Sendable {
    @usableFromInline var value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}
