/// The state of one ``FutureStream`` as a value; the stream owns it in a `Lock` and carries out
/// what the mutating events return after the lock is released.
@usableFromInline
struct StreamState<Value: Sendable>: Sendable {
    @usableFromInline var recent: RecentResults<Value>
    /// Live subscribers in registration order, each with the id its token handler removes it by.
    @usableFromInline var subscribers: [(id: UInt64, subscriber: StreamSubscriber<Value>)] = []
    @usableFromInline var nextID: UInt64 = 0
    /// Token registrations to release when the stream finishes (combinators' `cancellationToken`).
    @usableFromInline var registrations: [CancellationRegistration] = []
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
        for entry in subscribers where entry.subscriber.enqueue(.result(result)) {
            ready.append(entry.subscriber)
        }
        return (ready, evicted)
    }

    /// Finishes the stream; nil when it was already finished. The subscribers are dropped from
    /// the state (each one gets `.finished` after its results) and the registrations returned
    /// for the caller to release.
    @inlinable
    mutating func finish() -> (ready: Ready, registrations: [CancellationRegistration])? {
        guard !isFinished else { return nil }
        isFinished = true
        var ready = Ready()
        for entry in subscribers where entry.subscriber.enqueue(.finished) {
            ready.append(entry.subscriber)
        }
        subscribers = []
        defer { registrations = [] }
        return (ready, registrations)
    }

    /// Replays the kept results (and the end, if finished) to `subscriber` and, unless the stream
    /// is finished, stores it. Returns its id (nil when finished) and whether to schedule it.
    @inlinable
    mutating func subscribe(_ subscriber: StreamSubscriber<Value>) -> (id: UInt64?, schedule: Bool) {
        var replay = recent.elements.map { StreamEvent.result($0) }
        if isFinished { replay.append(.finished) }
        let schedule = subscriber.enqueue(contentsOf: replay)
        guard !isFinished else { return (nil, schedule) }
        let id = nextID
        nextID &+= 1
        subscribers.append((id, subscriber))
        return (id, schedule)
    }

    /// Removes a subscriber (its token was cancelled); nil when it is gone already.
    @inlinable
    mutating func unsubscribe(_ id: UInt64) -> StreamSubscriber<Value>? {
        guard let index = subscribers.firstIndex(where: { $0.id == id }) else { return nil }
        return subscribers.remove(at: index).subscriber
    }
}
