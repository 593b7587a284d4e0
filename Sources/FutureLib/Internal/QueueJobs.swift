public import Dispatch  // public: `QueueSubmission.async(on:_:)` is called by inlinable code
import FutureLibConcurrencyHelpers

/// How FutureLib submits work to a `DispatchQueue` used as an execution context.
///
/// The main queue gets its blocks directly (counted for a `ManualClock`, see ``MainDeliveries``);
/// so do the global queues, which are concurrent. Every other queue gets its FutureLib work through
/// its ``QueueJobs``, so that a blocking wait on that queue can run the work queued behind it.
@usableFromInline
enum QueueSubmission: Sendable {
    /// Runs `work` on `queue`, as `queue.async(execute:)` does.
    @usableFromInline
    static func async(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        let jobs = QueueJobs.of(queue)
        switch jobs.role {
        case .jobs: jobs.submit(work, to: queue)
        case .main: MainDeliveries.async(onMain: queue, work)
        case .global: queue.async(execute: work)
        }
    }
}

/// The FutureLib work queued on one `DispatchQueue`, in submission order: what lets a blocking wait
/// on a serial queue end when the work it waits for is queued behind it. Kept on the queue itself
/// as a dispatch-specific value, so that the queue's blocks (and the code they call) find it too.
///
/// Each job is appended here, and one block per job is queued on the queue; a block runs the
/// first job still here. A blocking wait (`value()`, `wait(timeout:)`, `CancellationToken.wait`)
/// running on the queue — in a FutureLib job or in a block of the caller's own — blocks the queue,
/// so while it waits it runs the jobs here itself, in order, on its own thread: they are that
/// queue's work, the queue runs nothing else meanwhile (on a serial queue), and the queue's own
/// blocks for those jobs later find them gone. Blocks the caller queues with `async` are not
/// jobs: a waiter cannot reach them.
///
/// The main queue and the global queues get an object too, which only gives their ``Role``: their
/// work goes to them directly.
///
/// The cost on the submission path: a dispatch-specific lookup, a spin lock taken to append and
/// again to take the job, and `async` of one block made once per queue (so no block is allocated
/// per job); the allocation check `queue-execute` guards it.
final class QueueJobs: Sendable {
    /// What FutureLib does with the work it submits to a queue.
    enum Role {
        /// The main queue: submitted directly. A blocking wait there for work it has queued
        /// throws `FutureError.deadlock`.
        case main
        /// A global queue: submitted directly; concurrent, so no wait there needs the work
        /// queued behind it.
        case global
        /// Any other queue: submitted through this object's jobs, which a blocking wait on the
        /// queue runs.
        case jobs
    }

    /// A job in the queue. A struct: a bare closure stored in the generic `FIFO` would be
    /// wrapped in a thunk, an allocation per job (allocation check `queue-execute`).
    private struct Job {
        let run: @Sendable () -> Void
    }

    let role: Role

    /// Guards the three properties below. A spin lock: its sections are a few instructions and
    /// call nothing, and the submitter and the queue's thread take it for every job.
    private let lock = RawLock()
    // Sendable: the three are read and written only with `lock` held. Unchecked exclusivity: a
    // checked access costs two runtime calls, and no access spans a call that could reach it again.
    @exclusivity(unchecked) private nonisolated(unsafe) var jobs = FIFO<Job>()
    /// Jobs a waiter ran before their block came up: that many blocks find nothing to run.
    /// (Blocks and jobs are counted apart, so each block runs its own job or none: a job keeps
    /// its place among the caller's blocks unless a waiter ran it earlier.)
    @exclusivity(unchecked) private nonisolated(unsafe) var taken = 0
    /// The semaphores of the waits running these jobs, signalled when a job arrives.
    @exclusivity(unchecked) private nonisolated(unsafe) var helpers: [DispatchSemaphore] = []

    /// The block queued for each job: runs the first job still waiting. Made once per queue,
    /// so that `async` copies no block per job (a block of an escaping closure would be
    /// allocated each time).
    // Sendable: written once, in `init`, before the object is shared.
    private nonisolated(unsafe) var runNextBlock: @Sendable @convention(block) () -> Void = {}

    private init(role: Role) {
        self.role = role
        guard role == .jobs else { return }
        // Unowned: the queue holds this object (its specific value) until it is disposed, which
        // is after its last block ran; a strong reference would be a cycle that outlives it.
        runNextBlock = { [unowned self] in self.runNext() }
        WorkerPool.observesCancellationWaits  // a token's wait on the queue runs its jobs too
    }

    /// Appends `work` and queues a block for it on `queue`; wakes the waits running jobs.
    func submit(_ work: @escaping @Sendable () -> Void, to queue: DispatchQueue) {
        lock.withLock {
            jobs.append(Job(run: work))
            for helper in helpers { helper.signal() }  // a semaphore, not user code
        }
        queue.async(execute: runNextBlock)
    }

    /// A block of the queue: runs the first job, unless a waiter already ran the one it was for.
    private func runNext() {
        let job = lock.withLock { () -> Job? in
            guard taken == 0 else {
                taken -= 1
                return nil
            }
            return jobs.popFirst()
        }
        job?.run()
    }

    /// A waiter on the queue: the first job, if any, which its block will then skip.
    private func take() -> Job? {
        lock.withLock { () -> Job? in
            guard let job = jobs.popFirst() else { return nil }
            taken += 1
            return job
        }
    }

    /// Blocks the calling code, which runs on the queue, until `isDone()` or `deadline`, running
    /// the queue's jobs meanwhile. `semaphore` is the wait's own: signalled when what it waits for
    /// happens (and, from here, when a job arrives). A job it runs ends before `isDone()` is
    /// checked again, so a long job can make the wait return after its deadline. Jobs may wait
    /// in turn: a nested wait runs the later jobs.
    func help(
        until isDone: () -> Bool,
        waking semaphore: DispatchSemaphore,
        deadline: DispatchTime
    ) -> DispatchTimeoutResult {
        lock.withLock { helpers.append(semaphore) }
        defer { lock.withLock { helpers.removeAll { $0 === semaphore } } }
        while !isDone() {
            if let job = take() {
                job.run()
            } else if semaphore.wait(timeout: deadline) == .timedOut {
                return isDone() ? .success : .timedOut
            }
        }
        return .success
    }

    // MARK: - The object of a queue

    /// The key of each queue's object. The main queue gets its own when the key is made.
    private static let key: DispatchSpecificKey<QueueJobs> = {
        let key = DispatchSpecificKey<QueueJobs>()
        DispatchQueue.main.setSpecific(key: key, value: QueueJobs(role: .main))
        return key
    }()

    /// The object of every global queue.
    private static let global = QueueJobs(role: .global)

    /// Makes the objects of new queues one at a time, so that a queue gets one set of jobs.
    private static let registration = Lock(())

    /// The object of `queue`, made the first time.
    static func of(_ queue: DispatchQueue) -> QueueJobs {
        if let jobs = queue.getSpecific(key: key) { return jobs }
        return register(queue)
    }

    private static func register(_ queue: DispatchQueue) -> QueueJobs {
        // The global queues are told by their labels (they are shared, and on Darwin take no
        // specific value, so a global queue asks every time there).
        let isGlobal = queue.label.hasPrefix("com.apple.root.")
        #if canImport(Darwin)
        if isGlobal { return global }
        #endif
        return registration.withLock { _ in
            if let jobs = queue.getSpecific(key: key) { return jobs }
            let jobs = isGlobal ? global : QueueJobs(role: .jobs)
            queue.setSpecific(key: key, value: jobs)
            return jobs
        }
    }

    /// Before a blocking wait for a future whose completing work goes to `queue` (`map(on:)` on a
    /// pending future has queued nothing yet): gives the queue its object now, so that a wait
    /// running on that queue finds it, even if FutureLib has queued nothing there before.
    static func prepare(_ queue: DispatchQueue) {
        _ = of(queue)
    }

    /// The jobs of the queue running the calling code (or of a queue it targets), if FutureLib
    /// submitted work to it; nil on the main queue, a global queue, and threads of no queue.
    static var current: QueueJobs? {
        guard let jobs = DispatchQueue.getSpecific(key: key), jobs.role == .jobs else { return nil }
        return jobs
    }
}
