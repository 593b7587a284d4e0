/// The state of one ``FutureStream`` as a value; the stream owns it in a `Lock` and carries out
/// what the mutating events return after the lock is released.
@usableFromInline
struct StreamState<Value: Sendable>: Sendable {
    @usableFromInline var recent: RecentResults<Value>
    /// Live subscribers in registration order, each removable by its token's handler in O(1)
    /// (it knows its slot, ``Slots``). With a scan and `remove(at:)`, an unsubscribe cost O(n)
    /// under the lock, O(n²) for n leaving at once (a server broadcasting on one stream to many
    /// clients that disconnect). Guarded by callgrind `stream-unsubscribe-<N>`,
    /// `scaling-stream-unsubscribe` and `mallinfo-stream-subscriber` (a slot is an optional
    /// reference, where an id and a reference would take twice as much).
    @usableFromInline var subscribers = Slots<StreamSubscriber<Value>>()
    /// What to do when the stream finishes: token registrations to release (combinators'
    /// `cancellationToken`), and an operator's own clean-up (a timer to stop, an inner
    /// subscription to leave).
    @usableFromInline var registrations: [StreamEndAction] = []
    /// A combinator's stage: the stream itself while it has subscribers and has not finished, so
    /// that a stage nobody holds lives exactly as long as something subscribes to it.
    @usableFromInline var keepAlive: FutureStream<Value>?
    /// A combinator's stage: removes its subscription from its source (run when it is released).
    @usableFromInline var detach: (@Sendable () -> Void)?
    // Last, so that its padding holds the byte `Lock` adds after the state.
    @usableFromInline var isFinished = false

    @inlinable
    init(capacity: Int) {
        recent = RecentResults(capacity: capacity)
    }

    /// Subscribers to schedule after the lock is released (no array for the common single one).
    @usableFromInline
    struct Ready: Sendable {
        @usableFromInline var first: StreamSubscriber<Value>?
        @usableFromInline var more: [StreamSubscriber<Value>] = []

        @inlinable
        init() {}

        @inlinable
        mutating func append(_ subscriber: StreamSubscriber<Value>) {
            if first == nil { first = subscriber } else { more.append(subscriber) }
        }

        /// Starts every subscriber's delivery. Never call it with a lock held.
        @inlinable
        func schedule() {
            first?.schedule()
            for subscriber in more { subscriber.schedule() }
        }
    }

    /// Records `result` and queues it for every subscriber; nil when the stream is finished.
    /// `evicted` is the result that fell out of the ring, to release outside the lock.
    @inlinable
    mutating func publish(
        _ result: Result<Value, any Error>
    ) -> (ready: Ready, evicted: Result<Value, any Error>?)? {
        guard !isFinished else { return nil }
        let evicted = recent.append(result)
        var ready = Ready()
        for case let subscriber? in subscribers.slots where subscriber.enqueue(.result(result)) {
            ready.append(subscriber)
        }
        return (ready, evicted)
    }

    /// Finishes the stream; nil when it was already finished. The subscribers are dropped from
    /// the state (each one gets `.finished` after its results) and the registrations returned
    /// for the caller to release.
    /// A stage's hold on itself goes too (`keepAlive`, for the caller to release after scheduling).
    @inlinable
    mutating func finish() -> (
        ready: Ready, registrations: [StreamEndAction], keepAlive: FutureStream<Value>?
    )? {
        guard !isFinished else { return nil }
        isFinished = true
        var ready = Ready()
        for case let subscriber? in subscribers.slots where subscriber.enqueue(.finished) {
            ready.append(subscriber)
        }
        subscribers = Slots()
        defer { registrations = [] }
        return (ready, registrations, keepAlive.take())
    }

    /// Replays the kept results (and the end, if finished) to `subscriber` and, unless the stream
    /// is finished, stores it. Returns whether it was stored and whether to schedule it.
    @inlinable
    mutating func subscribe(_ subscriber: StreamSubscriber<Value>) -> (stored: Bool, schedule: Bool) {
        var replay = recent.elements.map { StreamEvent.result($0) }
        if isFinished { replay.append(.finished) }
        let schedule = subscriber.enqueue(contentsOf: replay)
        guard !isFinished else { return (false, schedule) }
        subscribers.append(subscriber)
        return (true, schedule)
    }

    /// Removes `subscriber` (its token was cancelled) in O(1); nil when it is gone already. The
    /// last one removed drops the array, as finishing does.
    /// When that was a stage's last subscriber, its hold on itself is returned too, for the caller
    /// to release after the lock.
    @inlinable
    mutating func unsubscribe(
        _ subscriber: StreamSubscriber<Value>
    ) -> (removed: StreamSubscriber<Value>?, keepAlive: FutureStream<Value>?) {
        let removed = subscribers.remove(subscriber)
        guard removed != nil, subscribers.isEmpty else { return (removed, nil) }
        subscribers = Slots()
        return (removed, keepAlive.take())
    }
}

/// One thing a stream does when it finishes, after its lock is released.
@usableFromInline
enum StreamEndAction: Sendable {
    /// Releases a combinator's token registration.
    case unregister(CancellationRegistration)
    /// An operator's clean-up: stops its timer, leaves an inner stream.
    case run(@Sendable () -> Void)

    @inlinable
    func perform() {
        switch self {
        case .unregister(let registration): registration.unregister()
        case .run(let action): action()
        }
    }
}
