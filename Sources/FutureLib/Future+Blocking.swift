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

extension Future {
    /// Blocks the calling thread until the future completes, and returns its value.
    ///
    /// For tests, scripts and threads you own. Async code gets the non-blocking overload
    /// (`try await future.value()`) automatically.
    ///
    /// ```swift
    /// @Test func parsesConfig() throws {
    ///     let config = try loadConfig(path).value()
    ///     #expect(config.port == 8080)
    /// }
    /// ```
    ///
    /// ### Blocking safely
    /// The work FutureLib runs itself (`Future { … }`, `Future { try await … }`, timers, `.default`)
    /// runs on FutureLib's own threads, never on Swift's cooperative pool, so blocking a cooperative
    /// thread here (as synchronous Swift Testing tests do) does not starve it. Work you start
    /// yourself is another matter: a promise fulfilled from a plain `Task { }` needs a free
    /// cooperative thread, and blocked ones may be all there are (one per core), so the wait never
    /// ends. Start such work with `Future { try await … }`, or use `try await future.value()`.
    /// Blocking a serial `DispatchQueue` on work queued on that queue is covered below.
    ///
    /// When `value()` has blocked a thread that runs a Swift task (the cooperative pool, or an
    /// actor's executor) for more than 5 seconds, it prints one warning to standard error naming
    /// this likely cause and the fix — once per process — and goes on waiting.
    ///
    /// ### Deadlock detection
    /// Called on the main queue (or the main actor) for a future whose completing work is queued on
    /// the main queue (`Future(on: DispatchQueue.main) { … }`, `map(on: DispatchQueue.main)` and the
    /// other combinators, whether or not their source has completed yet), `value()` throws
    /// ``FutureError/deadlock(queue:)`` at once instead of hanging.
    ///
    /// ### Blocking another serial queue
    /// On any other `DispatchQueue` (a serial one included) that FutureLib has queued work on,
    /// `value()` does not hang on work queued behind it: while it blocks, it runs the FutureLib work
    /// queued on that queue (continuations and `Future(on: queue) { … }`), in order, on its own
    /// thread, until its future completes. So a job may wait for work it queued on its own queue:
    ///
    /// ```swift
    /// let store = DispatchQueue(label: "com.example.store")
    /// let doubled = Future(on: store) {
    ///     try Future(on: store) { 21 }.value() * 2  // the inner job runs while this one waits: 42
    /// }
    /// ```
    ///
    /// The queue still runs one thing at a time, in order; but, as on an actor at an `await`, other
    /// jobs of the queue may run during the wait, so a job must not count on the queue's state
    /// being untouched across it. Blocks you queue yourself with `async` are not FutureLib's work:
    /// they wait for the queue as before. A job of a serial ``LimitedExecutionContext`` is not stuck
    /// either: it gives up its slot while it waits.
    ///
    /// - Returns: The value.
    /// - Throws: The future's error: `CancellationError` if it was cancelled,
    ///   ``FutureError/brokenPromise`` if its promise was dropped; ``FutureError/deadlock(queue:)``
    ///   if it would block the main queue on work that needs the main queue.
    @available(
        *,
        noasync,
        message:
            "value() blocks the thread; use 'try await future.value()' in async code (in top-level code of main.swift, which the compiler resolves to this overload, call it from an async function)"
    )
    public func value() throws -> Value {
        if let result = try resultOrDeadlock() { return try result.get() }
        let semaphore = DispatchSemaphore(value: 0)
        observe(on: .synchronous, cancellationToken: .none, .result { _ in semaphore.signal() })
        BlockingWait.wait(for: semaphore, until: nil) { isCompleted }
        return try result!.get()
    }

    /// Blocks the calling thread until the future completes or `timeout` passes.
    ///
    /// ```swift
    /// let user = try fetchUser(id).value(timeout: .seconds(5))
    /// ```
    ///
    /// ### Deadlock detection
    /// As ``value()-d84y``: called on the main queue (or the main actor) for a future whose completing
    /// work is queued on the main queue, it throws ``FutureError/deadlock(queue:)`` at once rather
    /// than waiting out `timeout` for work that cannot run. On another `DispatchQueue` it runs the
    /// FutureLib work queued on that queue while it waits, until the future completes or `timeout`
    /// passes; a job it has started finishes first, so the wait may end that much later.
    ///
    /// - Parameter timeout: The longest time to block. Negative timeouts count as zero.
    /// - Returns: The value.
    /// - Throws: ``FutureError/timeout`` if the future is still pending at the deadline (the
    ///   future is not affected), ``FutureError/deadlock(queue:)`` if it would block the main queue
    ///   on work that needs the main queue, otherwise the future's error.
    @available(
        *,
        noasync,
        message: "value(timeout:) blocks the thread; use 'try await future.value(timeout:)' in async code"
    )
    public func value(timeout: Duration) throws -> Value {
        if let result = try resultOrDeadlock() { return try result.get() }
        guard wait(timeout: timeout) else { throw FutureError.timeout }
        return try result!.get()
    }

    /// The result, or nil while pending; throws ``FutureError/deadlock(queue:)`` when waiting here
    /// would block the main queue that is to complete the future. One trip through the lock.
    private func resultOrDeadlock() throws -> Result<Value, any Error>? {
        let (result, completingQueue) = withState { ($0.result, $0.completingQueue) }
        guard result == nil, let completingQueue else { return result }
        if let main = MainQueue.wouldDeadlock(waitingFor: completingQueue) {
            throw FutureError.deadlock(queue: main.label)
        }
        QueueJobs.prepare(completingQueue)
        return nil
    }

    /// Blocks the calling thread until the future completes or `timeout` passes.
    ///
    /// ```swift
    /// if !future.wait(timeout: .seconds(1)) { print("still running") }
    /// ```
    ///
    /// On a `DispatchQueue` other than the main queue, it runs the FutureLib work queued on that
    /// queue while it waits, as ``value()-d84y`` does.
    ///
    /// - Parameter timeout: The longest time to block. Negative timeouts count as zero.
    /// - Returns: `true` if the future is complete.
    @available(
        *,
        noasync,
        message:
            "wait(timeout:) blocks the thread; use 'await future.wait(timeout:)' in async code (in top-level code of main.swift, which the compiler resolves to this overload, call it from an async function)"
    )
    public func wait(timeout: Duration) -> Bool {
        if isCompleted { return true }
        if let completingQueue = withState({ $0.completingQueue }) { QueueJobs.prepare(completingQueue) }
        let semaphore = DispatchSemaphore(value: 0)
        let waiter = CancellationRequest()
        observe(on: .synchronous, cancellationToken: waiter.token, .result { _ in semaphore.signal() })
        let deadline = DispatchTime.now() + timeout.dispatchInterval
        BlockingWait.wait(for: semaphore, until: deadline) { isCompleted }
        waiter.cancel()  // removes the waiter's continuation if it is still pending
        return isCompleted
    }
}

// MARK: - The wait

/// The one wait of the library's blocking API: `value()`, `value(timeout:)`, `wait(timeout:)`, and
/// (through `ThreadBlocking`) `CancellationToken.wait(timeout:)`.
enum BlockingWait {
    /// Blocks until `isDone()`, which `semaphore` is signalled for, or until `deadline` (none:
    /// no deadline, and the long-wait warning of ``BlockingDiagnostic``).
    ///
    /// Whatever thread it blocks, the work the wait may need still runs: a pool thread is
    /// replaced meanwhile and a capped context's job gives up its slot (``WorkerPool/blocking(_:)``);
    /// on a `DispatchQueue` that FutureLib queues work to (a serial one included), the wait runs
    /// the FutureLib work queued on it meanwhile, which the blocked queue could not
    /// (``QueueJobs/help(until:waking:deadline:)``). The main queue is not helped: a wait there for
    /// work queued on it throws `FutureError.deadlock` before it blocks.
    @discardableResult
    static func wait(for semaphore: DispatchSemaphore, until deadline: DispatchTime?, isDone: () -> Bool) -> Bool {
        WorkerPool.blocking {
            if let jobs = QueueJobs.current {
                return jobs.help(until: isDone, waking: semaphore, deadline: deadline ?? .distantFuture) == .success
            }
            guard let deadline else {
                BlockingDiagnostic.wait(for: semaphore)
                return true
            }
            return semaphore.wait(timeout: deadline) == .success
        }
    }
}

// MARK: - Diagnostic

/// The one warning of a blocking `value()` that holds a thread of Swift's concurrency runtime for
/// long: the likely deadlock of a promise that a plain `Task { }` should fulfil.
///
/// Costs nothing until a wait has lasted ``threshold``: `value()` waits in one timed slice of that
/// length (instead of an untimed wait) and looks at the thread only when the slice expires. Package
/// access so that the tests can shorten the threshold and capture the message.
package enum BlockingDiagnostic {
    package struct Configuration: Sendable {
        /// How long `value()` blocks a task's thread before it warns.
        package var threshold: Duration = .seconds(5)
        /// Where the warning goes; nil: standard error.
        package var sink: (@Sendable (String) -> Void)?
        /// Whether the process has warned already (it warns once).
        package var hasWarned = false

        package init(threshold: Duration = .seconds(5), sink: (@Sendable (String) -> Void)? = nil) {
            self.threshold = threshold
            self.sink = sink
        }
    }

    private static let configuration = Lock(Configuration())
    /// Read without the lock before every long wait: set once the process has warned.
    private static let hasWarned = Atomic(false)

    /// Replaces the configuration (and forgets an earlier warning); returns the previous one.
    @discardableResult
    package static func configure(_ new: Configuration) -> Configuration {
        // Relaxed: the lock orders the configuration; the flag only skips the timed slice.
        hasWarned.store(new.hasWarned, ordering: .relaxed)
        return configuration.withLock { configuration in
            let previous = configuration
            configuration = new
            return previous
        }
    }

    /// Waits for `semaphore`; once, after ``Configuration/threshold`` on a task's thread, warns.
    static func wait(for semaphore: DispatchSemaphore) {
        guard !hasWarned.load(ordering: .relaxed) else {
            semaphore.wait()
            return
        }
        let threshold = configuration.withLock { $0.threshold }
        if semaphore.wait(timeout: DispatchTime.now() + threshold.dispatchInterval) == .timedOut {
            warnIfTaskThread(after: threshold)
            semaphore.wait()
        }
    }

    /// A thread runs a Swift task when there is a current task; FutureLib's own pool threads (which
    /// run the tasks of `Future { async }` and are replaced while they block) do not count.
    private static func warnIfTaskThread(after threshold: Duration) {
        let isTaskThread = withUnsafeCurrentTask { $0 != nil }
        guard isTaskThread, PerThread.current.pool == nil else { return }
        let sink = configuration.withLock { configuration -> (@Sendable (String) -> Void)?? in
            guard !configuration.hasWarned else { return nil }
            configuration.hasWarned = true
            return .some(configuration.sink)
        }
        guard let sink else { return }
        hasWarned.store(true, ordering: .relaxed)
        let message = message(after: threshold)
        if let sink {
            sink(message)
        } else {
            let line = message + "\n"
            _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }  // stderr: unbuffered, no shared FILE
        }
    }

    static func message(after threshold: Duration) -> String {
        """
        FutureLib warning: Future.value() has blocked a thread that runs Swift tasks (the \
        cooperative pool: a synchronous Swift Testing test, or synchronous code called from async \
        code) for more than \(threshold). If this future is completed by a plain `Task { }` or \
        other work on the cooperative pool, that work may be waiting for this very thread: a \
        deadlock. Fix: create the future with `Future { try await … }` (its task runs on \
        FutureLib's own threads), or use `try await future.value()` in async code. This warning \
        is printed once per process.
        """
    }
}
