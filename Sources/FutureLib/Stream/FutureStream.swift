public import FutureLibConcurrencyHelpers  // public: inlinable code uses its lock
public import Synchronization  // public: inlinable code reads and writes `hasFinished`

/// Results that arrive many times: location updates, sensor readings, progress.
///
/// A future completes once; a stream delivers any number of results (values or errors), in
/// order, until it finishes. Its ``StreamPromise`` (or an adapter such as
/// `FutureStream(capacity:method:)` or `FutureStream(capacity:cancellationToken:_:)` over an
/// `AsyncSequence`) writes the results; subscribers read them with `onSuccess`, `onFailure`,
/// `onComplete` and `onFinish`, with the combinators (`map`, `flatMap`, `filter`, `recover`, …),
/// or with `for try await value in stream.values`.
///
/// ```swift
/// let readings = StreamPromise<Double>(capacity: 10)
/// readings.stream
///     .filter { $0 >= 0 }
///     .map { $0 * 9 / 5 + 32 }
///     .onSuccess(on: DispatchQueue.main) { fahrenheit in label.text = "\(fahrenheit) °F" }
/// readings.fulfill(21.5)
/// readings.finish()
/// ```
///
/// ### Capacity: what late subscribers see
/// The stream keeps its last ``capacity`` results, and only those: when a new result arrives and
/// `capacity` are kept already, the oldest one is dropped. A subscriber added later first gets the
/// kept results, oldest first, then every new one. `capacity: 0` keeps nothing (a subscriber sees
/// only what arrives after it subscribed); `Int.max` keeps everything, and is the only way to let
/// the stream grow without bound.
///
/// ### Order and threads
/// Each subscriber gets every result that arrives while it is subscribed, exactly once, in the
/// order the stream recorded them (for concurrent producers: the order their calls took the
/// stream's lock). A subscriber's handler runs on its context, one call at a time, never
/// concurrently with itself, even on a concurrent context such as ``ExecutionContext/default``.
/// Different subscribers are independent: a slow one delays neither the producer nor the others
/// (its results queue up for it). Handlers run outside every lock of the stream.
///
/// ### Finishing
/// ``StreamPromise/finish()`` ends the stream; so does dropping the last reference to its
/// promise. Each subscriber then gets its remaining results, then the end
/// (`onFinish(on:cancellationToken:_:)` runs), and its handler is released. A subscriber added
/// after the end gets the kept results and then the end at once. Results written after the end are
/// ignored.
public final class FutureStream<Value: Sendable>: Sendable {
    /// How many of the latest results the stream keeps for subscribers that come later.
    ///
    /// ```swift
    /// let progress = StreamPromise<Double>(capacity: 1)  // a late subscriber sees the latest value
    /// #expect(progress.stream.capacity == 1)
    /// ```
    public let capacity: Int

    /// The state's `isFinished`, set in the critical section that finishes the state and never
    /// cleared, for readers without the lock: ``isFinished``, and the `deinit`s of the stream and
    /// its promise. Those run unspecialized, as every generic class's does, and `finish()` there
    /// looked up the generic metadata of the lock, the state and its parts even for a stream that
    /// had ended (callgrind `stream-lifecycle`). It and `isStage` come before `state`, whose size
    /// depends on `Value`, so that a `deinit` reads them at fixed offsets.
    @usableFromInline let hasFinished = Atomic<Bool>(false)
    /// Whether this is a combinator's stage, which holds its source's subscriber weakly: it keeps
    /// itself alive while it has subscribers (``StreamState/keepAlive``), and unsubscribes from
    /// its source when it is released (``StreamState/detach``).
    @usableFromInline let isStage: Bool
    @usableFromInline let state: Lock<StreamState<Value>>

    /// An empty stream, written through ``publish(_:)`` and ``finish()``.
    @usableFromInline
    init(capacity: Int, isStage: Bool = false) {
        precondition(capacity >= 0, "capacity must not be negative")
        self.capacity = capacity
        self.isStage = isStage
        state = Lock(StreamState(capacity: capacity))
    }

    /// A stream that is deallocated has nobody left to publish to it: finish it, so that its
    /// subscribers (a `for await` loop, `onFinish`) end instead of waiting forever. A wrapped API
    /// that drops its callback, or a loop that holds only its iterator, leads here. A stage that
    /// nobody holds or subscribes to leaves its source: nothing could observe it any more.
    deinit {
        if !hasFinished.load(ordering: .acquiring) { finish() }
        // `take()` moves the closure out (a read would retain a copy), as `finishAndDetach()` does,
        // which may have run it already (nil here then). Nothing else reaches the state now; the
        // lock orders this read after `installDetach`'s write on another thread where
        // ThreadSanitizer sees it.
        if isStage, let detach = state.withLock({ $0.detach.take() }) { detach() }
    }

    /// Whether the stream has finished: no result will follow.
    ///
    /// ```swift
    /// let promise = StreamPromise<Int>(capacity: 1)
    /// promise.finish()
    /// #expect(promise.stream.isFinished)
    /// ```
    public var isFinished: Bool {
        hasFinished.load(ordering: .acquiring)
    }

    /// How many subscribers the stream holds now (for tests: a cancelled one is gone at once).
    package var subscriberCount: Int {
        state.withLock { $0.subscribers.count }
    }

    // MARK: - Writing (internal: promises, adapters and combinators)

    /// Records `result` and hands it to every subscriber; false when the stream is finished.
    @inlinable @discardableResult
    func publish(_ result: Result<Value, any Error>) -> Bool {
        // `evicted` is kept in a binding and released after the lock: a discarded result (`_`) may be
        // released inside the lock in release builds, and a user value's `deinit` may run there.
        guard let (ready, evicted) = state.withLock({ $0.publish(result) }) else { return false }
        withExtendedLifetime(evicted) {}
        ready.schedule()
        return true
    }

    /// Ends the stream; false when it had ended already.
    @inlinable @discardableResult
    func finish() -> Bool {
        let finished = state.withLock { state in
            let finished = state.finish()
            if finished != nil { hasFinished.store(true, ordering: .releasing) }
            return finished
        }
        guard let (ready, registrations, keepAlive) = finished else { return false }
        for action in registrations { action.perform() }
        ready.schedule()
        if let keepAlive { DeferredRelease.release(keepAlive) }
        return true
    }

    /// Publishes `CancellationError` and finishes: what a cancelled combinator token does.
    ///
    /// One critical section for both: when two threads cancel at once, the stream gets a single
    /// `CancellationError`, and no result lands after it.
    @usableFromInline
    func cancelAndFinish() {
        typealias Done = (
            published: StreamState<Value>.Ready, evicted: Result<Value, any Error>?,
            finished: StreamState<Value>.Ready, registrations: [StreamEndAction],
            keepAlive: FutureStream<Value>?
        )
        let done = state.withLock { state -> Done? in
            guard let (published, evicted) = state.publish(.failure(cancelledFailure)),
                let (finished, registrations, keepAlive) = state.finish()
            else { return nil }
            hasFinished.store(true, ordering: .releasing)
            return (published, evicted, finished, registrations, keepAlive)
        }
        guard let done else { return }  // `evicted` is released here, outside the lock
        for action in done.registrations { action.perform() }
        done.published.schedule()
        done.finished.schedule()
        if let keepAlive = done.keepAlive { DeferredRelease.release(keepAlive) }
    }

    /// Keeps `registration` until the stream finishes, then unregisters it (at once if it has).
    @usableFromInline
    func releaseOnFinish(_ registration: CancellationRegistration) {
        let finished = state.withLock { state -> Bool in
            guard !state.isFinished else { return true }
            state.registrations.append(.unregister(registration))
            return false
        }
        if finished { registration.unregister() }
    }

    /// Runs `action` once when the stream finishes (cancelled, or released unfinished, included),
    /// outside its lock; at once if it has finished. An operator stops its timers with it.
    @usableFromInline
    func onEnd(_ action: @escaping @Sendable () -> Void) {
        let finished = state.withLock { state -> Bool in
            guard !state.isFinished else { return true }
            state.registrations.append(.run(action))
            return false
        }
        if finished { action() }
    }

    // MARK: - Subscribing (internal: callbacks, combinators, iterators)

    /// Adds a subscriber that gets the kept results, then every new one, then `.finished`; or
    /// `.cancelled` (and nothing more) once `cancellationToken` is cancelled. Returns it when the
    /// stream stored it (it had not finished).
    @inlinable @discardableResult
    func subscribe(
        on context: any ExecutionContext,
        cancellationToken: CancellationToken,
        wantsResults: Bool = true,
        feedsStream: Bool = false,
        _ handler: @escaping StreamSubscriber<Value>.Handler
    ) -> StreamSubscriber<Value>? {
        let subscriber = StreamSubscriber(
            context: context,
            wantsResults: wantsResults,
            feedsStream: feedsStream,
            handler: handler
        )
        if cancellationToken.isCancellationRequested {
            subscriber.cancel()
            return nil
        }
        let (stored, schedule) = state.withLock { state in
            let (stored, schedule) = state.subscribe(subscriber)
            // A stage with a subscriber lives as long as it has one (a retain; released after the lock).
            if isStage, stored, state.keepAlive == nil { state.keepAlive = self }
            return (stored, schedule)
        }
        if schedule { subscriber.schedule() }
        guard stored else { return nil }
        guard cancellationToken.canBeCancelled else { return subscriber }
        let registration = cancellationToken.onCancel { [weak self] in
            defer { subscriber.cancel() }
            guard let stream = self else { return }
            stream.unsubscribe(subscriber)
            // A stage may lose its last subscriber, and this be its last reference (see `detach`).
            if stream.isStage { DeferredRelease.release(consume stream) }
        }
        subscriber.attach(registration)
        return subscriber
    }

    /// Removes `subscriber`; a stage that loses its last subscriber stops holding itself.
    ///
    /// Inlinable, so that it is specialized with the subscriber's handler in the client: called
    /// unspecialized, each call looked up the generic metadata of the subscriber, its mailbox, the
    /// lock and the slots (callgrind `stream-unsubscribe-1000`).
    @inlinable
    func unsubscribe(_ subscriber: StreamSubscriber<Value>) {
        // The removed subscriber is released after the lock (kept in a binding: a discarded
        // result may be released inside the lock), and the stage's hold on itself through the
        // release queue: releasing it may release a chain of stages.
        let (removed, keepAlive) = state.withLock { $0.unsubscribe(subscriber) }
        withExtendedLifetime(removed) {}
        if let keepAlive { DeferredRelease.release(keepAlive) }
    }
}

extension FutureStream: EndedByToken {
    @inlinable
    func endCancelled() {
        cancelAndFinish()
    }

    @inlinable
    func releaseWhenEnded(_ registration: CancellationRegistration) {
        releaseOnFinish(registration)
    }
}
