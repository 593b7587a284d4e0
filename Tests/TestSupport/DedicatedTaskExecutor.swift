import Foundation

/// A task executor with a thread of its own: a task started with it as its preference runs there,
/// not on the cooperative pool.
///
/// For a task that a race's thread blocks on while it holds ``HeavyGate``: synchronous tests run
/// on the cooperative pool (as many threads as processors) and may keep it busy for seconds, and a
/// task waiting there for a thread would hold every other heavy job back with it.
///
/// ```swift
/// let loop = Task(executorPreference: DedicatedTaskExecutor.shared) {
///     for try await value in stream.values() { seen.withLock { $0.append(value) } }
/// }
/// ```
// Sendable: `jobs` and `thread` are read and written only under `condition`'s lock.
package final class DedicatedTaskExecutor: TaskExecutor, @unchecked Sendable {
    /// One executor thread for the whole test process.
    package static let shared = DedicatedTaskExecutor()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    /// The executor's thread, once it started.
    private var thread: pthread_t?

    private init() {
        let thread = Thread { [unowned self] in runJobs() }
        thread.name = "DedicatedTaskExecutor"
        thread.start()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Whether the calling code runs on the executor's thread.
    ///
    /// ```swift
    /// let onIt = await Task(executorPreference: DedicatedTaskExecutor.shared) {
    ///     DedicatedTaskExecutor.shared.isCurrentThread
    /// }.value
    /// ```
    package var isCurrentThread: Bool {
        condition.lock()
        defer { condition.unlock() }
        return thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// Runs the jobs in the order they came, forever (the executor is never released).
    private func runJobs() -> Never {
        condition.lock()
        thread = pthread_self()
        condition.unlock()
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }  // outside the lock
        }
    }
}
