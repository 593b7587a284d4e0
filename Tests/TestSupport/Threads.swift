import Cancellation
package import Foundation  // package: `currentThreadID()` returns `pthread_t`
import FutureLibConcurrencyHelpers
import Synchronization

// MARK: - Dedicated threads

/// Runs `body` on a new Foundation `Thread` and suspends (without blocking a cooperative thread)
/// until it returns. Every blocking call of the tests goes through here, so a test body never
/// blocks the cooperative pool.
///
/// `body`, and all it captured, is released before the task resumes: a `Thread` keeps its closure
/// until the thread exits, which may come after the awaiting task already checked that a value it
/// handed to `body` was deallocated (seen on an 8-core machine, where the task resumes at once).
@discardableResult
package func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    let work = DedicatedThreadWork(body)
    return await withCheckedContinuation { continuation in
        startDedicatedThread { continuation.resume(returning: work.run()) }
    }
}

/// Starts a thread with a 1 MB stack that runs `body`.
private func startDedicatedThread(_ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.stackSize = 1 << 20
    thread.start()
}

/// The body of a dedicated thread, which the thread releases as soon as it returned.
// Sendable: `body` is written before `Thread.start()` (which happens before the thread runs) and
// then read and cleared by that one thread only.
private final class DedicatedThreadWork<T: Sendable>: @unchecked Sendable {
    private var body: (@Sendable () -> T)?

    init(_ body: @escaping @Sendable () -> T) {
        self.body = body
    }

    /// Runs the body once and releases it (and what it captured) before returning its result.
    func run() -> T {
        guard let body = body.take() else { preconditionFailure("a dedicated thread's body runs once") }
        return body()
    }
}

/// Runs seconds of CPU-bound work (a million-link chain, a million registrations) on a dedicated
/// thread, one such job (or spinning group, see ``HeavyGate``) at a time in the process.
package func onHeavyThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await onDedicatedThread { HeavyGate.shared.holding(body) }
}

/// Starts `count` dedicated threads, releases them together through a barrier, and runs
/// `body(index)` on each. Suspends until every one returned. One such group (or heavy job, see
/// ``HeavyGate``) at a time in the process.
package func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await onDedicatedThread {
        HeavyGate.shared.holding {
            let barrier = SpinBarrier(parties: count)
            onNewThreadsJoined(count) { index in
                barrier.arriveAndWait()
                body(index)
            }
        }
    }
}

/// Runs `body(index)` on `count` new threads and blocks the calling thread (a dedicated one, never
/// a cooperative one) until every one returned; each thread releases its closure before that.
private func onNewThreadsJoined(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let finished = DispatchGroup()
    for index in 0..<count {
        let work = DedicatedThreadWork { body(index) }
        finished.enter()
        startDedicatedThread {
            work.run()
            finished.leave()
        }
    }
    finished.wait()
}

/// Identifies the calling thread, to check on which thread a handler ran.
package func currentThreadID() -> pthread_t {
    pthread_self()
}

/// Identifies a thread, to check on which thread a handler ran.
// Sendable: a `pthread_t` (a pointer on Darwin) is an opaque identifier, only compared.
package struct ThreadID: Equatable, @unchecked Sendable {
    private let thread: pthread_t

    /// The calling thread.
    package static var current: ThreadID {
        ThreadID(thread: pthread_self())
    }

    package static func == (lhs: ThreadID, rhs: ThreadID) -> Bool {
        pthread_equal(lhs.thread, rhs.thread) != 0
    }
}

/// Blocks the calling (dedicated) thread for `duration`. Used only to widen a race window,
/// never to assert on elapsed time.
package func pause(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
}

// MARK: - Barrier

/// A reusable barrier for a fixed number of threads that spins first, so the threads leave it as
/// close together as possible (the point of a race test), and then sleeps.
///
/// The sleep is for a machine busy with other work: a thread that only yields gets a time slice
/// after every other runnable thread, and every round then waits for both threads to be scheduled
/// in turn (a race of 1,000 rounds took minutes beside two CPU-bound processes); a sleeping thread
/// is woken when the last one arrives, and the scheduler runs a woken thread soon. On a quiet
/// machine the threads arrive within the spin, as before.
package final class SpinBarrier: Sendable {
    private let parties: Int
    private let arrived = Atomic<Int>(0)
    private let generation = Atomic<Int>(0)
    /// Where the threads that stopped spinning sleep; the last to arrive bumps `generation` while
    /// holding it, so a sleeper checks `generation` and sleeps atomically.
    private let sleepers = NSCondition()

    package init(parties: Int) {
        precondition(parties > 0, "parties must be positive")
        self.parties = parties
    }

    /// Returns once all `parties` threads have called it (for this round).
    package func arriveAndWait() {
        let round = generation.load(ordering: .acquiring)
        if arrived.add(1, ordering: .acquiringAndReleasing).newValue == parties {
            arrived.store(0, ordering: .relaxed)
            sleepers.lock()
            generation.add(1, ordering: .releasing)  // releasing: publishes the round's setup
            sleepers.broadcast()
            sleepers.unlock()
            return
        }
        var spins = 0
        while generation.load(ordering: .acquiring) == round {
            spins += 1
            if spins > 2_000 {
                sleepers.lock()
                while generation.load(ordering: .acquiring) == round { sleepers.wait() }
                sleepers.unlock()
                return
            }
            if spins > 64 { sched_yield() }
        }
    }
}

// MARK: - Small thread-safe values

/// A value shared by threads, guarded by a `Lock` (a `Mutex` that ThreadSanitizer sees).
package final class Locked<Value: Sendable>: Sendable {
    private let storage: Lock<Value>

    package init(_ value: Value) {
        storage = Lock(value)
    }

    package var value: Value {
        storage.withLock { $0 }
    }

    package func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R {
        storage.withLock { body(&$0) }
    }
}

/// A counter shared by threads.
package final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    package init() {}

    package var value: Int {
        count.load(ordering: .acquiring)
    }

    @discardableResult
    package func increment() -> Int {
        count.add(1, ordering: .acquiringAndReleasing).newValue
    }

    @discardableResult
    package func decrement() -> Int {
        count.subtract(1, ordering: .acquiringAndReleasing).newValue
    }
}

/// A one-shot signal between a handler and another thread (a thin `DispatchSemaphore` wrapper
/// whose `wait` always has a generous timeout, so a bug fails the test instead of hanging it).
package final class Signal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    package init() {}

    package func fire() {
        semaphore.signal()
    }

    /// Blocks until fired; false if that took longer than `seconds` of a quiet machine (a failure,
    /// not a timing check).
    ///
    /// The bound guards against a hang only: what fires it may be a task that waits for a free
    /// cooperative thread (two on a 2-core machine) behind other suites' blocking tests, which a
    /// loaded machine stretches to tens of seconds. So it is counted on ``LoadScaledDeadline``:
    /// up to ``LoadScaledClock/maximumSlowdown`` times as long on a loaded machine.
    @discardableResult
    package func wait(seconds: Int = 120) -> Bool {
        var deadline = LoadScaledDeadline(seconds: seconds)
        while semaphore.wait(timeout: .now() + .seconds(1)) != .success {
            if deadline.hasPassed() { return semaphore.wait(timeout: .now()) == .success }
        }
        return true
    }
}

// MARK: - Polling

/// Polls `condition` on a dedicated thread until it holds or `seconds` of a quiet machine have
/// passed (``LoadScaledDeadline``: longer on a loaded machine). For outcomes that a background
/// queue produces at some later point (a Dispatch timer releasing its handler); asserts only on
/// the outcome, never on how long it took.
package func eventually(
    withinSeconds seconds: Int = 120,
    _ condition: @escaping @Sendable () -> Bool
) async -> Bool {
    await onDedicatedThread {
        var deadline = LoadScaledDeadline(seconds: seconds)
        while !deadline.hasPassed() {
            if condition() { return true }
            pause(.milliseconds(5))
        }
        return condition()
    }
}

// MARK: - Cores

/// How many cores the machine has, to nest blocking work deeper than the pool has threads.
package enum WorkerCount {
    package static let cores = ProcessInfo.processInfo.activeProcessorCount
}

// MARK: - Handler probes

/// A cancellation handler that records how often it ran and whether it ran on the thread that
/// created the probe (create it on the thread that registers the handler).
package final class RunProbe: Sendable {
    private let runs = Counter()
    private let sameThread = Locked(false)
    private let creatingThread = ThreadID.current

    package init() {}

    /// The handler to register.
    package var handler: @Sendable () -> Void {
        { [self] in
            runs.increment()
            sameThread.withLock { $0 = ThreadID.current == creatingThread }
        }
    }

    /// How often the handler ran.
    package var runCount: Int { runs.value }

    /// Whether its last run was on the creating thread.
    package var ranOnRegisteringThread: Bool { sameThread.value }
}

// MARK: - One spinning group at a time

/// Lets one group of spinning threads (``onThreads(_:_:)``, ``race(iterations:setup:actions:check:)``)
/// or one heavy job (``onHeavyThread(_:)``, ``onSmallStack(stackSize:_:)``) run at a time in the
/// whole test process.
///
/// Swift Testing runs suites in parallel. Several race suites at once put a dozen threads spinning
/// on barriers onto 2 cores: each round then waits for the scheduler to run a partner thread,
/// and the rest of the process (the cooperative pool, Dispatch's timer threads) starves for tens
/// of seconds.
///
/// The one that waits here is the job's own dedicated thread, never a task, so the gate passes from
/// one job to the next without a cooperative thread: synchronous tests run on the cooperative pool
/// (as many threads as processors) and may keep it busy for seconds, and a gate held by a task
/// would stay held while that task waited for a thread to resume on. Not reentrant: a job that
/// waited for another heavy job inside its body would wait forever.
package final class HeavyGate: Sendable {
    package static let shared = HeavyGate()

    private let turn = DispatchSemaphore(value: 1)

    /// Blocks the calling (dedicated) thread until no other job runs, then runs `body`.
    package func holding<T>(_ body: () -> T) -> T {
        turn.wait()
        defer { turn.signal() }
        return body()
    }
}
