public import Dispatch  // public: inlinable code tests for `DispatchQueue`

/// What the blocking `value()` needs to tell that it would deadlock: which futures have their
/// completion queued on a `DispatchQueue` and not started yet, and which of those queues the
/// calling thread is running on.
///
/// FutureLib records a future here when it submits the work that completes it to a queue
/// (`Future(on: queue) { … }`, and combinators such as `map(on: queue)`), and forgets it when
/// that work starts. Each such queue gets a ``QueueMark`` as its dispatch-specific value, so that
/// `DispatchQueue.getSpecific(key:)` says whether the calling thread runs on it (or on a queue
/// that targets it).
@usableFromInline
enum QueueCompletion: Sendable {
    /// The queue specific that marks a queue FutureLib completes futures on.
    static let key = DispatchSpecificKey<QueueMark>()

    /// Futures whose completion is queued and not started, by identity. The queued work holds
    /// the future, so an identity cannot be reused while it is here.
    private static let pending = Lock<[ObjectIdentifier: QueueMark]>([:])

    /// How long `value()` waits before it reports a deadlock on a queue other than the main
    /// queue: a concurrent queue starts the work on another thread meanwhile, a serial one cannot.
    static let grace: Duration = .seconds(1)

    /// `context`, or for a `DispatchQueue` a context that records `future` until the work starts.
    /// Call it for contexts other than `.synchronous` only (a new existential costs on the hot path).
    @usableFromInline
    static func asynchronousContext(
        _ context: any ExecutionContext,
        completing future: AnyObject
    ) -> any ExecutionContext {
        guard let queue = context as? DispatchQueue, tracks(queue) else { return context }
        return QueueCompletionContext(queue: queue, future: ObjectIdentifier(future))
    }

    /// The continuation target for `context`: for a `DispatchQueue`, one that records `future`
    /// until the work starts. Call it for contexts other than `.synchronous` only.
    @inlinable
    static func target(_ context: some ExecutionContext, completing future: AnyObject) -> ContinuationTarget {
        guard let queue = context as? DispatchQueue else { return ContinuationTarget(context) }
        return queueTarget(queue, completing: future)
    }

    @usableFromInline
    static func queueTarget(_ queue: DispatchQueue, completing future: AnyObject) -> ContinuationTarget {
        guard tracks(queue) else { return .queue(queue) }
        return .other(ContextBox(QueueCompletionContext(queue: queue, future: ObjectIdentifier(future))))
    }

    /// Whether completions queued on `queue` are recorded: not on Dispatch's global queues, which
    /// are concurrent (a blocked thread is no deadlock), and on which Apple's libdispatch refuses
    /// `setSpecific`. A queue that already carries its mark is known without reading its label,
    /// which builds a `String` (an allocation for a label longer than 15 bytes) on every call.
    @usableFromInline
    static func tracks(_ queue: DispatchQueue) -> Bool {
        queue.getSpecific(key: key) != nil || !queue.label.hasPrefix("com.apple.root.")
    }

    static func submit(
        _ work: @escaping @Sendable () -> Void,
        to queue: DispatchQueue,
        completing future: ObjectIdentifier
    ) {
        pending.withLock { pending in
            let mark: QueueMark
            if let existing = queue.getSpecific(key: key) {
                mark = existing
            } else {
                mark = QueueMark(queue)
                queue.setSpecific(key: key, value: mark)
            }
            pending[future] = mark
        }
        queue.async {
            pending.withLock { _ = $0.removeValue(forKey: future) }
            work()
        }
    }

    /// The queue that `future`'s queued completion needs, when the calling thread runs on it.
    static func blockedQueue(completing future: AnyObject) -> QueueMark? {
        guard let current = DispatchQueue.getSpecific(key: key) else { return nil }
        let needed = pending.withLock { $0[ObjectIdentifier(future)] }
        return needed === current ? current : nil
    }

    /// Whether `future`'s completion is still queued on `mark`'s queue, not started.
    static func isQueued(_ future: AnyObject, on mark: QueueMark) -> Bool {
        pending.withLock { $0[ObjectIdentifier(future)] } === mark
    }
}

/// Identifies a queue FutureLib completes futures on (its dispatch-specific value).
final class QueueMark: Sendable {
    let label: String
    /// The main queue is serial: no grace period before reporting.
    let isMain: Bool

    init(_ queue: DispatchQueue) {
        label = queue.label
        isMain = queue === DispatchQueue.main
    }
}

/// A `DispatchQueue` that records the future its work completes, until the work starts.
struct QueueCompletionContext: ExecutionContext {
    let queue: DispatchQueue
    let future: ObjectIdentifier

    func execute(_ work: @escaping @Sendable () -> Void) {
        QueueCompletion.submit(work, to: queue, completing: future)
    }
}
