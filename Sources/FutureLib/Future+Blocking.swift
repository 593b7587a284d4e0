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
    /// - Returns: The value.
    /// - Throws: The future's error: `CancellationError` if it was cancelled,
    ///   ``FutureError/brokenPromise`` if its promise was dropped.
    @available(*, noasync, message: "value() blocks the thread; use 'try await future.value()' in async code")
    public func value() throws -> Value {
        if let result { return try result.get() }
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
