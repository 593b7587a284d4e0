import Dispatch

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
    /// The work behind a future runs on FutureLib's own threads or the context you gave it, never
    /// on Swift's cooperative pool, so blocking a cooperative thread here (as synchronous Swift
    /// Testing tests do) does not starve it. Do not block on the serial queue that the future's
    /// own completion needs: that deadlocks.
    ///
    /// ### Deadlock detection
    /// When this future's completion is queued on the `DispatchQueue` that the calling thread is
    /// running on (`Future(on: queue) { … }` or a combinator such as `map(on: queue)` whose source
    /// has completed), the work cannot start until this call returns if the queue is serial. Then
    /// `value()` throws ``FutureError/deadlock(queue:)``, naming the queue, instead of hanging:
    /// at once on the main queue, and on other queues once the work has not started within about a
    /// second (FutureLib cannot tell a serial queue from a concurrent one, where the work starts on
    /// another thread meanwhile and `value()` returns normally).
    ///
    /// Not detected (these still hang): a completion that is queued only after `value()` started
    /// waiting (its source was still pending); a queue step further up the chain
    /// (`Future(on: queue) { … }.map { … }.value()`); promises fulfilled by code you submit to the
    /// queue yourself; `value(timeout:)` and `wait(timeout:)`, which end at their deadline anyway.
    ///
    /// - Returns: The value.
    /// - Throws: The future's error: `CancellationError` if it was cancelled,
    ///   ``FutureError/brokenPromise`` if its promise was dropped; ``FutureError/deadlock(queue:)``
    ///   if it would wait forever on the serial queue its completion needs.
    @available(*, noasync, message: "value() blocks the thread; use 'try await future.value()' in async code")
    public func value() throws -> Value {
        if let result { return try result.get() }
        if let queue = QueueCompletion.blockedQueue(completing: self) { return try value(blocking: queue) }
        let semaphore = DispatchSemaphore(value: 0)
        observe(on: .synchronous, cancellationToken: .none, .result { _ in semaphore.signal() })
        WorkerPool.blocking { semaphore.wait() }
        return try result!.get()
    }

    /// `value()` on the queue that this future's queued completion needs: on a serial queue that
    /// work cannot start while this thread blocks, so after a grace period (none for the main
    /// queue) in which it did not start, this throws instead of waiting forever.
    private func value(blocking queue: QueueMark) throws -> Value {
        let semaphore = DispatchSemaphore(value: 0)
        let waiter = CancellationRequest()
        observe(on: .synchronous, cancellationToken: waiter.token, .result { _ in semaphore.signal() })
        let grace = queue.isMain ? .zero : QueueCompletion.grace
        let deadline = DispatchTime.now() + grace.dispatchInterval
        if WorkerPool.blocking({ semaphore.wait(timeout: deadline) }) == .timedOut {
            if !isCompleted, QueueCompletion.isQueued(self, on: queue) {
                waiter.cancel()  // removes the waiter's continuation
                throw FutureError.deadlock(queue: queue.label)
            }
            WorkerPool.blocking { semaphore.wait() }  // started meanwhile (a concurrent queue): it completes
        }
        return try result!.get()
    }

    /// Blocks the calling thread until the future completes or `timeout` passes.
    ///
    /// ```swift
    /// let user = try fetchUser(id).value(timeout: .seconds(5))
    /// ```
    ///
    /// - Parameter timeout: The longest time to block. Negative timeouts count as zero.
    /// - Returns: The value.
    /// - Throws: ``FutureError/timeout`` if the future is still pending at the deadline (the
    ///   future is not affected), otherwise the future's error.
    @available(
        *,
        noasync,
        message: "value(timeout:) blocks the thread; use 'try await future.value(timeout:)' in async code"
    )
    public func value(timeout: Duration) throws -> Value {
        guard wait(timeout: timeout) else { throw FutureError.timeout }
        return try result!.get()
    }

    /// Blocks the calling thread until the future completes or `timeout` passes.
    ///
    /// ```swift
    /// if !future.wait(timeout: .seconds(1)) { print("still running") }
    /// ```
    ///
    /// - Parameter timeout: The longest time to block. Negative timeouts count as zero.
    /// - Returns: `true` if the future is complete.
    @available(*, noasync, message: "wait(timeout:) blocks the thread; use 'await future.wait(timeout:)' in async code")
    public func wait(timeout: Duration) -> Bool {
        if isCompleted { return true }
        let semaphore = DispatchSemaphore(value: 0)
        let waiter = CancellationRequest()
        observe(on: .synchronous, cancellationToken: waiter.token, .result { _ in semaphore.signal() })
        let deadline = DispatchTime.now() + timeout.dispatchInterval
        _ = WorkerPool.blocking { semaphore.wait(timeout: deadline) }
        waiter.cancel()  // removes the waiter's continuation if it is still pending
        return isCompleted
    }
}
