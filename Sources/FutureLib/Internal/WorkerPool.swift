import Cancellation
import Dispatch
import FutureLibConcurrencyHelpers
import Synchronization

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
/// library's own blocking API (`value()`, `wait(timeout:)`, `CancellationToken.wait(timeout:)`)
/// while work is queued, the pool starts
/// a replacement thread (like a fork-join pool's compensation), so nested blocking cannot
/// deadlock it; surplus threads exit after a few idle seconds.
///
/// ### Wake-ups
/// Queued work needs no signal while a thread spins (below) or is already being woken
/// (`wakeUpPending`); otherwise one sleeping thread is signalled, after the lock is released (so
/// that it does not block at once on the lock its waker still holds), or a thread is started if
/// none sleeps and the pool is below its size. A thread that takes a job and leaves more queued
/// does the same for the next, so a burst signals once and fans out one thread at a time (guarded
/// by `RoundsDriver 9-task`, one `Future { async }` awaited at a time).
///
/// ### Spinning
/// With more than one core, one thread that runs out of work spins for up to
/// ``spinNanoseconds`` before it sleeps, polling for a submission and yielding its core between
/// rounds of polls. Work that comes back within microseconds (a `Future { async }` awaited in a
/// loop: each is submitted a few microseconds after the last ended) then needs no wake-up through
/// the kernel, which costs microseconds. The yield keeps a loaded machine's other
/// threads, among them the one about to submit, running: without it the spin cost more than it
/// saved there. A spin that sees work sooner than ``quickCatchNanoseconds`` means a burst whose
/// work arrives about as fast as the pool runs it: spinning then only takes the core from the
/// thread that submits, so the next thread to run dry sleeps at once, unless it is the only pool
/// thread awake: then no other thread would see the next job, and a quick catch means one job at a
/// time handed back and forth with a thread that watches for its result (``AwaitSpin``, an awaited
/// `Future { async }`); sleeping there costs a kernel wake-up per job (`RoundsDriver 9-task`). The
/// price is up to ``spinNanoseconds`` of one core each time the pool runs dry.
/// Figures in Documentation/Internals.md ("The worker pool").
final class WorkerPool: @unchecked Sendable {
    // Sendable: every mutable property below is read and written only with `lock` held;
    // `submitted` is an atomic.

    enum Work {
        case closure(@Sendable () -> Void)
        case job(UnownedJob)
        /// A task to create and start on the thread that takes this (``TaskPlacement/startOnPool(_:)``).
        /// `@isolated(any)`, the type that `Task.immediate` takes: any other async function type is
        /// wrapped in one more closure to pass it there, an allocation per task (`RoundsDriver 9-task`).
        case task(@Sendable @isolated(any) () async -> Void)
    }

    static let shared: WorkerPool = {
        Settling.install()  // so that `await ManualClock.advanceAndSettle(by:)` waits for this pool's work
        return WorkerPool(runnableThreads: WorkerPool.processorCount)
    }()

    /// How long a thread that runs out of work watches for more before it sleeps: 0 (never) on a
    /// single processor (``processorCount``: also under `taskset -c 0` or a CPU quota of 1),
    /// where the spinner would only delay the thread that submits.
    static let spinNanoseconds = processorCount > 1 ? 20_000 : 0

    /// A spin that sees work sooner than this marks a burst (see Spinning).
    static let quickCatchNanoseconds = 2_000

    private let lock = ConditionLock()
    private let runnableThreads: Int
    // Unchecked exclusivity: the lock already serialises every access, and the runtime's checks
    // would double the cost of a job's enqueue and dequeue.
    @exclusivity(unchecked) private var queue = FIFO<Work>()
    private var threads = 0
    /// Threads asleep in `lock.wait`, or woken and not yet holding the lock again.
    private var idle = 0
    private var blocked = 0
    /// Whether a sleeping thread has been signalled and has not yet taken the lock again: it will
    /// see the queue, so work queued meanwhile signals nobody.
    private var wakeUpPending = false
    /// Whether a thread is spinning (see ``spinNanoseconds``): it takes the lock and sees the
    /// queue when it stops, so work queued meanwhile signals nobody.
    private var spinning = false
    /// Set when the last spin saw work within ``quickCatchNanoseconds``: work arrives about as
    /// fast as the pool runs it, so the next thread to run dry sleeps at once if another pool
    /// thread is awake (see Spinning).
    private var skipNextSpin = false
    /// Set when work is queued while a thread spins; the spinner polls it without the lock.
    private let submitted = Atomic<Bool>(false)
    /// Jobs a thread is running (blocked ones included), and every submission so far: what
    /// ``whenIdle(_:)`` reads. Counted under the lock the pool takes anyway, so they cost no atomic.
    private var running = 0
    private var submissions: UInt64 = 0
    /// What ``whenIdle(_:)`` runs when the pool next has nothing queued and nothing running.
    private var idleWaiters: [@Sendable (UInt64) -> Void] = []

    init(runnableThreads: Int) {
        self.runnableThreads = max(2, runnableThreads)
        Self.observesCancellationWaits
    }

    /// The processors the process can use: online, in its affinity mask and within its cgroup's
    /// CPU quota (`CurrentProcessor.count`).
    static var processorCount: Int { CurrentProcessor.count }

    /// Queues `work`; a pool thread runs it soon, in FIFO order of submission.
    func submit(_ work: Work) {
        lock.lock()
        queue.append(work)
        submissions &+= 1
        if spinning { submitted.store(true, ordering: .releasing) }
        let help = threadForQueuedWork()
        lock.unlock()
        help.carryOut(in: self)
    }

    /// Called by a pool thread about to block in the library's blocking API.
    func willBlock() {
        lock.lock()
        blocked += 1
        let help = queue.isEmpty ? .none : threadForQueuedWork()
        let idle = takeIdleWaiters()
        lock.unlock()
        help.carryOut(in: self)
        idle?.resume()
    }

    /// Called by a pool thread after blocking.
    func didUnblock() {
        lock.withLock { blocked -= 1 }
    }

    /// How queued work gets a thread, carried out after the lock is released.
    private enum Help {
        case none
        case wake
        case start

        func carryOut(in pool: WorkerPool) {
            switch self {
            case .none: break
            case .wake: pool.lock.signal()
            case .start: pool.startThread()
            }
        }
    }

    /// With the lock held and work queued: nothing if a thread spins or is being woken (it will
    /// see the queue); else wake a sleeping thread, or start one if none sleeps and fewer than the
    /// target can run.
    private func threadForQueuedWork() -> Help {
        if spinning || wakeUpPending { return .none }
        if idle > 0 {
            wakeUpPending = true
            return .wake
        }
        return reserveThreadIfNeeded() ? .start : .none
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
            if queue.isEmpty, Self.spinNanoseconds > 0, !spinning {
                // A burst's quick catch (see Spinning), and another thread awake to take its next job.
                if skipNextSpin, threads - idle - blocked > 1 {
                    skipNextSpin = false
                } else {
                    skipNextSpin = false
                    spinning = true
                    submitted.store(false, ordering: .relaxed)
                    lock.unlock()
                    let spun = spinUntilSubmitted()
                    lock.lock()
                    spinning = false
                    skipNextSpin = spun < Self.quickCatchNanoseconds
                }
            }
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
            running += 1
            // More work than this thread: get another thread onto it (a burst's single signal fans
            // out this way, one thread at a time).
            let help = queue.isEmpty ? .none : threadForQueuedWork()
            lock.unlock()
            help.carryOut(in: self)
            run(consume work)  // `work` ends here, not at the end of the loop body
            lock.lock()
            running -= 1
            if !idleWaiters.isEmpty, let idle = takeIdleWaiters() {
                lock.unlock()
                idle.resume()
                lock.lock()
            }
        }
    }

    /// Polls `submitted` until it is set or ``spinNanoseconds`` have passed; returns how long it
    /// spun (see ``spin(upTo:until:)``).
    private func spinUntilSubmitted() -> Int {
        spin(upTo: Self.spinNanoseconds) { submitted.load(ordering: .acquiring) }.elapsed
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
                Task.immediate(executorPreference: self, operation: body)
            } else {
                Task(executorPreference: self, operation: body)
            }
        }
    }

    /// Runs `body`, a blocking wait, telling the pool of the current thread, if any, that it
    /// blocks (so that it starts another thread for queued work), and giving up meanwhile the slots
    /// of the capped contexts whose jobs run on this thread (so that work queued behind the waiter
    /// on them runs). The slots are taken back, in the order they were taken, before it returns.
    static func blocking<T>(_ body: () throws -> T) rethrows -> T {
        let thread = PerThread.current
        let pool = thread.pool
        guard pool != nil || !thread.heldSlots.isEmpty else { return try body() }
        // Taken off the thread first: a job that a released slot starts inline here (on a
        // `.synchronous` base) has slots of its own, and must not give up these again.
        let slots = thread.heldSlots
        thread.heldSlots = []
        for context in slots.reversed() { context.releaseSlot() }
        pool?.willBlock()
        defer {
            // The innermost context's slot was taken first (its job then queued on the outer one).
            for context in slots.reversed() { context.reclaimSlot() }
            pool?.didUnblock()
            thread.heldSlots = slots
        }
        return try body()
    }

    /// Makes the blocking waits of the `Cancellation` module (`CancellationToken.wait(timeout:)`)
    /// go through ``BlockingWait``. Done once, before the pool, a capped context or a queue's
    /// ``QueueJobs`` runs any work.
    static let observesCancellationWaits: Void = ThreadBlocking.install(BlockingObserver())

    private struct BlockingObserver: ThreadBlockingObserver {
        func wait(for semaphore: DispatchSemaphore, until deadline: DispatchTime, isDone: () -> Bool) -> Bool {
            BlockingWait.wait(for: semaphore, until: deadline, isDone: isDone)
        }
    }
}

// MARK: - Idle, for `await ManualClock.advanceAndSettle(by:)`

extension WorkerPool {
    /// The waiters of ``whenIdle(_:)`` taken out, and the submission count they get.
    private struct IdleWaiters {
        var waiters: [@Sendable (UInt64) -> Void]
        var submissions: UInt64

        func resume() {
            for waiter in waiters { waiter(submissions) }
        }
    }

    /// With the lock held: whether nothing is queued and every job running is blocked in the
    /// library's blocking API (waiting for something else to happen).
    private var isIdle: Bool {
        queue.isEmpty && running == blocked
    }

    /// With the lock held: the waiters to resume, if the pool is idle and some wait.
    private func takeIdleWaiters() -> IdleWaiters? {
        guard !idleWaiters.isEmpty, isIdle else { return nil }
        defer { idleWaiters = [] }
        return IdleWaiters(waiters: idleWaiters, submissions: submissions)
    }

    /// Calls `resume` (outside the lock) once nothing is queued and no job runs, at once if so
    /// now, with the number of submissions so far.
    func whenIdle(_ resume: @escaping @Sendable (UInt64) -> Void) {
        lock.lock()
        guard isIdle else {
            idleWaiters.append(resume)
            lock.unlock()
            return
        }
        let submissions = submissions
        lock.unlock()
        resume(submissions)
    }

    /// Whether the pool is idle and has had no submission since it counted `submissions`.
    func isIdle(since submissions: UInt64) -> Bool {
        lock.withLock { isIdle && self.submissions == submissions }
    }
}

extension WorkerPool: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }
}
