import Dispatch

/// The blocking `value()`'s one deadlock check: blocking the main queue on a future whose
/// completing work is queued on the main queue can never return.
///
/// It replaced a process-wide registry of queued completions (`QueueCompletion`), which took a
/// global lock twice on every `map(on: queue)`, marked every user queue with a dispatch-specific
/// value, and decided for other serial queues after a one-second wait. Now a future completed on
/// a queue keeps that queue in its pending state (``FutureState/Storage/queued(_:on:)``), which
/// costs nothing more on the non-blocking path, and only a blocking `value()` looks at it. Other
/// queues are not checked (FutureLib cannot tell a serial queue from a concurrent one without
/// waiting): a blocking wait there runs the FutureLib work queued behind it (``QueueJobs``).
enum MainQueue {
    /// A key set on the main queue alone, once, the first time a blocking `value()` asks.
    ///
    /// On Linux, `DispatchQueue.main === DispatchQueue.main` is false (each access wraps the
    /// queue anew), so identity cannot tell the main queue; its specific value can, on both
    /// platforms: `queue.getSpecific(key:)` reads that queue's own value, and
    /// `DispatchQueue.getSpecific(key:)` the value of the queue running the calling code.
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether `queue` is the main queue.
    static func isMain(_ queue: DispatchQueue) -> Bool {
        queue.getSpecific(key: key) == true
    }

    /// Whether the calling code runs on the main queue (in a block or job of the main queue,
    /// including main-actor code).
    static var isCurrent: Bool {
        DispatchQueue.getSpecific(key: key) == true
    }

    /// The main queue if blocking here would wait for work that needs it: the calling code runs
    /// on the main queue and `queue` (the one whose work completes the future) is the main queue.
    static func wouldDeadlock(waitingFor queue: DispatchQueue?) -> DispatchQueue? {
        guard let queue, isCurrent, isMain(queue) else { return nil }
        return queue
    }
}
