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
    /// Testing tests do) does not starve it. Do not block the serial queue that the future's own
    /// completion needs (a `Future(on: queue)`, or a `map(on: queue)` or other combinator given
    /// that queue): the work can never start, and this call never returns.
    ///
    /// ### Deadlock detection
    /// Called on the main queue (or the main actor) for a future whose completing work is queued on
    /// the main queue (`Future(on: DispatchQueue.main) { … }`, `map(on: DispatchQueue.main)` and the
    /// other combinators, whether or not their source has completed yet), `value()` throws
    /// ``FutureError/deadlock(queue:)`` at once instead of hanging. Blocking any other serial queue
    /// on its own work is not detected (FutureLib cannot tell a serial queue from a concurrent
    /// one): use `try await future.value()`, or `value(timeout:)`, there.
    ///
    /// - Returns: The value.
    /// - Throws: The future's error: `CancellationError` if it was cancelled,
    ///   ``FutureError/brokenPromise`` if its promise was dropped; ``FutureError/deadlock(queue:)``
    ///   if it would block the main queue on work that needs the main queue.
    @available(*, noasync, message: "value() blocks the thread; use 'try await future.value()' in async code")
    public func value() throws -> Value {
        if let result { return try result.get() }
        if let main = MainQueue.wouldDeadlock(waitingFor: withState({ $0.completingQueue })) {
            throw FutureError.deadlock(queue: main.label)
        }
        let semaphore = DispatchSemaphore(value: 0)
        observe(on: .synchronous, cancellationToken: .none, .result { _ in semaphore.signal() })
        WorkerPool.blocking { semaphore.wait() }
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
