#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The threads behind ``DefaultExecutionContext`` and the tasks of `Future { async … }`.
///
/// A pool of its own, so that nothing the library runs needs a free thread of Swift's cooperative
/// pool: tests and scripts may block cooperative threads on `value()` and the work they wait for
/// still runs here. It keeps about one runnable thread per core. When a pool thread blocks in the
/// library's own blocking API (`value()`, `wait(timeout:)`) while work is queued, the pool starts
/// a replacement thread (like a fork-join pool's compensation), so nested blocking cannot
/// deadlock it; surplus threads exit after a few idle seconds.
///
/// ### Wake-ups
/// At most one sleeping thread is being woken at a time (`wakeUpPending`): a burst of submissions
/// signals once, and the woken thread, finding more queued work when it takes its job, wakes the
/// next sleeper. The condition is signalled after the lock is released, so the woken thread does
/// not block at once on the lock its waker still holds. Measured with Benchmarks/Rounds (scenario
/// 9, one `Future { async }` awaited at a time): futex calls per round trip 8.3 → 4.
final class WorkerPool: @unchecked Sendable {
    // Sendable: every mutable property below is read and written only with `lock` held.

    enum Work {
        case closure(@Sendable () -> Void)
        case job(UnownedJob)
        /// A task to create and start on the thread that takes this (``TaskPlacement/startOnPool(_:)``).
        case task(@Sendable () async -> Void)
    }

    static let shared = WorkerPool(runnableThreads: WorkerPool.processorCount)

    private let lock = ConditionLock()
    private let runnableThreads: Int
    // Unchecked exclusivity: the lock already serialises every access, and the runtime's checks
    // would double the cost of a job's enqueue and dequeue.
    @exclusivity(unchecked) private var queue = FIFO<Work>()
    private var threads = 0
    /// Threads asleep in `lock.wait`, or woken and not yet holding the lock again.
    private var idle = 0
    private var blocked = 0
    /// Whether a sleeping thread has been signalled and has not yet taken the lock again: until
    /// it has, further submissions signal nobody (it wakes the next sleeper if work remains).
    private var wakeUpPending = false

    init(runnableThreads: Int) {
        self.runnableThreads = max(2, runnableThreads)
    }

    static var processorCount: Int {
        Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// Queues `work`; a pool thread runs it soon, in FIFO order of submission.
    func submit(_ work: Work) {
        lock.lock()
        queue.append(work)
        let wake = claimWakeUp()
        let spawn = !wake && idle == 0 && reserveThreadIfNeeded()
        lock.unlock()
        if wake { lock.signal() }
        if spawn { startThread() }
    }

    /// With the lock held: whether the caller should signal a sleeping thread once it has released
    /// the lock, because one sleeps and none is being woken already; if so, notes the wake-up.
    private func claimWakeUp() -> Bool {
        guard idle > 0, !wakeUpPending else { return false }
        wakeUpPending = true
        return true
    }

    /// Called by a pool thread about to block in the library's blocking API.
    func willBlock() {
        lock.lock()
        blocked += 1
        let wake = !queue.isEmpty && claimWakeUp()
        let spawn = !wake && !queue.isEmpty && idle == 0 && reserveThreadIfNeeded()
        lock.unlock()
        if wake { lock.signal() }
        if spawn { startThread() }
    }

    /// Called by a pool thread after blocking.
    func didUnblock() {
        lock.withLock { blocked -= 1 }
    }

    /// With the lock held: whether fewer threads than the target can run; if so counts one more.
    private func reserveThreadIfNeeded() -> Bool {
        guard threads - blocked < runnableThreads else { return false }
        threads += 1
        return true
    }

    private func startThread() {
        let box = Unmanaged.passRetained(self).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t? = nil
        #else
        var thread = pthread_t()
        #endif
        let status = pthread_create(
            &thread,
            nil,
            { argument in
                #if canImport(Darwin)
                let pool = Unmanaged<WorkerPool>.fromOpaque(argument).takeRetainedValue()
                #else
                let pool = Unmanaged<WorkerPool>.fromOpaque(argument!).takeRetainedValue()
                #endif
                pool.runWorker()
                return nil
            },
            box
        )
        precondition(status == 0, "FutureLib could not start a worker thread (pthread_create: \(status))")
        pthread_detach(thread)
    }

    private func runWorker() {
        PerThread.current.pool = self
        lock.lock()
        while true {
            while queue.isEmpty {
                idle += 1
                let signalled = lock.wait(seconds: 5)
                idle -= 1
                // Whoever wakes first (signalled, spuriously or timed out) takes the pending wake-up:
                // it holds the lock now and sees the queue, so no job waits for the signal.
                wakeUpPending = false
                if !signalled, queue.isEmpty, threads - blocked > runnableThreads {
                    threads -= 1  // surplus after compensation: let it go
                    lock.unlock()
                    return
                }
            }
            let work = queue.popFirst()!
            // More work than this thread: pass the wake-up on to the next sleeper, or start a
            // thread if none sleeps and the pool is below its size (a burst's single signal fans
            // out this way, one thread at a time).
            let wake = !queue.isEmpty && claimWakeUp()
            let spawn = !wake && !queue.isEmpty && idle == 0 && reserveThreadIfNeeded()
            lock.unlock()
            if wake { lock.signal() }
            if spawn { startThread() }
            run(consume work)  // `work` ends here, not at the end of the loop body
            lock.lock()
        }
    }

    /// Runs `work` and releases it before returning: the lock is not held then. Releasing a
    /// closure can run user code (a promise it held breaks and runs its continuations), which
    /// may submit to this pool again.
    private func run(_ work: consuming Work) {
        switch consume work {
        case .closure(let body): body()
        case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
        case .task(let body):
            if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
                // Runs `body` here until it first suspends; its later jobs come back as `.job`.
                Task.immediate(executorPreference: self) { await body() }
            } else {
                Task(executorPreference: self) { await body() }
            }
        }
    }

    /// Tells the pool of the current thread, if any, that it is about to block in `body`.
    static func blocking<T>(_ body: () throws -> T) rethrows -> T {
        guard let pool = PerThread.current.pool else { return try body() }
        pool.willBlock()
        defer { pool.didUnblock() }
        return try body()
    }
}

extension WorkerPool: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }
}
