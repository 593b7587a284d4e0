import Dispatch
import FutureLibConcurrencyHelpers
import Synchronization

/// A context that runs at most ``maxConcurrency`` jobs at once on another context, and queues the rest.
///
/// Use it to protect a resource (a database pool, an API's rate limit) or to bound memory:
///
/// ```swift
/// let fourAtATime = LimitedExecutionContext(maxConcurrency: 4)
/// let thumbnails = urls.map { url in Future(on: fourAtATime) { try render(url) } }
/// ```
///
/// ### Semantics
/// - Jobs start in submission order (FIFO).
/// - A slot frees when a job returns; the next queued job then starts on the base context.
/// - The queue keeps a job only until it starts: a job that ran, and what it captured, is
///   released even while later jobs still wait.
/// - ``maxConcurrency`` can be raised or lowered at any time: raising starts queued jobs at once,
///   lowering lets running jobs finish and starts new ones only below the new cap.
/// - A job is the synchronous closure: work that returns a future and goes on asynchronously
///   has returned as far as this context is concerned. To cap asynchronous work, use
///   `traverse(maxConcurrency:)`.
///
/// ### A job that blocks gives up its slot
/// While a job blocks in one of FutureLib's blocking waits (`value()`, `value(timeout:)`,
/// `wait(timeout:)`, `CancellationToken.wait(timeout:)`) it does not count against the cap: its
/// slot passes to the next queued job, and the wait takes a slot back before it returns, ahead of
/// the queued jobs. So a job may wait for work it queued on its own context, even on a serial one:
///
/// ```swift
/// let serial = LimitedExecutionContext(maxConcurrency: 1)
/// let outer = Future(on: serial) {
///     try Future(on: serial) { 21 }.value() * 2  // the inner job runs while this one waits: 42
/// }
/// ```
///
/// Never more than ``maxConcurrency`` jobs run at once, but other jobs of the context may run
/// while one waits, as other work of an actor may run while one of its methods awaits.
public final class LimitedExecutionContext: ExecutionContext {
    private struct State: ~Copyable {
        var limit: Int
        /// Jobs holding a slot: running, not blocked.
        var running = 0
        /// Jobs waiting for a slot; each is released as it starts.
        var queue = FIFO<Job>()
        /// Blocked jobs whose wait ended, waiting to take a slot back (ahead of `queue`). Empty
        /// whenever a slot is free.
        var returning = FIFO<DispatchSemaphore>()

        var hasQueued: Bool { !queue.isEmpty }

        mutating func dequeue() -> @Sendable () -> Void {
            queue.popFirst()!.work
        }
    }

    /// A queued job: the closure inside a struct, because a closure stored as a generic element
    /// (`FIFO`'s) is converted to the generic form on the way in and back on the way out, each
    /// time by a reabstraction thunk with an allocated context; a struct's stored closure keeps
    /// its own form (guarded by AllocationCheck `limited-execute`).
    private struct Job {
        let work: @Sendable () -> Void
    }

    /// Who gets a freed slot, handed over after the lock is released.
    private enum Successor {
        case none
        case returning(DispatchSemaphore)
        case queued(@Sendable () -> Void)
    }

    private let base: any ExecutionContext
    private let state: Lock<State>

    /// Creates a context that runs at most `maxConcurrency` jobs at once on `base`.
    ///
    /// ```swift
    /// let serialOnPool = LimitedExecutionContext(maxConcurrency: 1)  // a serial context
    /// ```
    ///
    /// A `maxConcurrency` below 1 is a programming error: it stops with a precondition failure
    /// that names the argument.
    ///
    /// - Parameters:
    ///   - maxConcurrency: The cap; at least 1.
    ///   - base: Where jobs run. Defaults to ``ExecutionContext/default``.
    public init(maxConcurrency: Int, on base: any ExecutionContext = .default) {
        precondition(
            maxConcurrency >= 1,
            "LimitedExecutionContext: maxConcurrency must be at least 1, got \(maxConcurrency)"
        )
        self.base = base
        self.state = Lock(State(limit: maxConcurrency))
        WorkerPool.observesCancellationWaits  // a token's wait in a job gives up the job's slot too
    }

    /// The most jobs that run at once. Settable at any time, from any thread; at least 1.
    ///
    /// ```swift
    /// context.maxConcurrency = 8  // starts up to 4 more queued jobs right away
    /// ```
    public var maxConcurrency: Int {
        get { state.withLock { $0.limit } }
        set {
            precondition(newValue >= 1, "LimitedExecutionContext: maxConcurrency must be at least 1, got \(newValue)")
            let (resumable, startable) = state.withLock { state in
                state.limit = newValue
                var resumable: [DispatchSemaphore] = []
                var startable: [@Sendable () -> Void] = []
                while state.running < state.limit, let returning = state.returning.popFirst() {
                    state.running += 1
                    resumable.append(returning)
                }
                while state.running < state.limit, state.hasQueued {
                    state.running += 1
                    startable.append(state.dequeue())
                }
                return (resumable, startable)
            }
            for returning in resumable { returning.signal() }
            for work in startable { start(work) }
        }
    }

    /// How many jobs are running now; a job blocked in one of FutureLib's blocking waits is not
    /// (see "A job that blocks gives up its slot").
    ///
    /// ```swift
    /// print("\(context.runningCount) of \(context.maxConcurrency) slots in use")
    /// ```
    public var runningCount: Int {
        state.withLock { $0.running }
    }

    /// Runs `work` on the base context when a slot is free, in submission order.
    ///
    /// ```swift
    /// context.execute { importRecords() }
    /// ```
    ///
    /// - Parameter work: The code to run.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        let startNow = state.withLock { state in
            guard state.running < state.limit, !state.hasQueued else {
                state.queue.append(Job(work: work))
                return false
            }
            state.running += 1
            return true
        }
        if startNow { start(work) }
    }

    private func start(_ work: @escaping @Sendable () -> Void) {
        base.execute { [self] in
            // Known to the thread, so that a blocking wait in `work` gives up this slot meanwhile.
            PerThread.withCurrent { $0.heldSlots.append(self) }
            work()
            PerThread.withCurrent { _ = $0.heldSlots.popLast() }
            releaseSlot()
        }
    }

    /// A job returned, or blocks: its slot passes to a blocked job whose wait ended, else to the
    /// next queued job, unless the cap was lowered below the running count.
    func releaseSlot() {
        let successor = state.withLock { state -> Successor in
            if state.running <= state.limit {
                if let returning = state.returning.popFirst() { return .returning(returning) }
                if state.hasQueued { return .queued(state.dequeue()) }
            }
            state.running -= 1
            return .none
        }
        switch successor {
        case .none: break
        case .returning(let returning): returning.signal()
        case .queued(let next): start(next)
        }
    }

    /// A blocked job's wait ended: it takes a slot back, waiting for one if none is free.
    func reclaimSlot() {
        let semaphore = state.withLock { state -> DispatchSemaphore? in
            if state.running < state.limit {
                state.running += 1
                return nil
            }
            let semaphore = DispatchSemaphore(value: 0)
            state.returning.append(semaphore)
            return semaphore
        }
        semaphore?.wait()  // the job that frees a slot hands it over: `running` is already counted
    }
}
