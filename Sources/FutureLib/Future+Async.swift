extension Future {
    /// Suspends until the future completes, and returns its value.
    ///
    /// This is the overload async code picks: it never blocks a thread.
    ///
    /// ```swift
    /// let user = try await fetchUser(id).value()
    /// ```
    ///
    /// ### Cancellation
    /// If the awaiting task is cancelled, this throws `CancellationError` at once and removes its
    /// continuation. Only this wait is abandoned: the future, its other waiters and the work that
    /// produces it are untouched (cancel the work with its token).
    ///
    /// - Returns: The value.
    /// - Throws: `CancellationError` if the task was cancelled, otherwise the future's error.
    @inlinable
    public func value() async throws -> Value {
        // Specialized in the caller: an already completed future costs one atomic load and a lock.
        if isCompleted, let result { return try result.get() }
        return try await awaitResult(timeout: nil).get()
    }

    /// Suspends until the future completes or `timeout` passes, and returns its value.
    ///
    /// ```swift
    /// let config = try await loadConfig().value(timeout: .seconds(2))
    /// ```
    ///
    /// On a ``ManualClock`` the timeout passes inside ``ManualClock/advance(by:)``, whichever
    /// task or thread calls it:
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let waiting = Task { try await Promise<Int>().future.value(timeout: .seconds(5), clock: clock) }
    /// // … once the task waits:
    /// clock.advance(by: .seconds(5))  // the task throws FutureError.timeout
    /// ```
    ///
    /// - Parameters:
    ///   - timeout: The longest time to wait. Negative timeouts count as zero.
    ///   - clock: The clock that measures `timeout`. Defaults to ``TimerClock/system``.
    /// - Returns: The value.
    /// - Throws: ``FutureError/timeout`` if the future is still pending at the deadline,
    ///   `CancellationError` if the task was cancelled, otherwise the future's error.
    @inlinable
    public func value(timeout: Duration, clock: some TimerClock = .system) async throws -> Value {
        if isCompleted, let result { return try result.get() }
        return try await awaitResult(timeout: timeout, clock: clock).get()
    }

    /// Suspends until the future completes or `timeout` passes.
    ///
    /// ```swift
    /// if await !future.wait(timeout: .seconds(1)) { print("still running") }
    /// ```
    ///
    /// Task cancellation ends the wait early.
    ///
    /// - Parameters:
    ///   - timeout: The longest time to wait. Negative timeouts count as zero.
    ///   - clock: The clock that measures `timeout`. Defaults to ``TimerClock/system``.
    /// - Returns: `true` if the future is complete.
    public func wait(timeout: Duration, clock: some TimerClock = .system) async -> Bool {
        _ = try? await awaitResult(timeout: timeout, clock: clock)
        return isCompleted
    }

    /// The result; or `CancellationError` when the task is cancelled first, or
    /// `FutureError.timeout` when the timeout passes first.
    ///
    /// Inlinable, so that it is specialized in the caller with `value()`: unspecialized, registering
    /// the continuation looks up generic metadata several times (Benchmarks/Rounds scenario 9).
    @inlinable
    func awaitResult(timeout: Duration?, clock: any TimerClock = .system) async throws -> Result<Value, any Error> {
        if let result { return result }
        // One request for both ways the wait can end early (task cancellation and the timeout);
        // cancelling it removes the continuation from the future.
        let waiter = CancellationRequest()
        if let timeout { waiter.cancel(after: timeout, clock: clock) }
        await withTaskCancellationHandler {
            // Unsafe, not checked: the callback below runs exactly once (with the result, or with
            // `CancellationError` when the waiter's token removes it), so the checked
            // continuation's extra allocation and its resume-once bookkeeping buy nothing here.
            await withUnsafeContinuation { continuation in
                observe(on: .synchronous, cancellationToken: waiter.token, .result { _ in continuation.resume() })
            }
        } onCancel: {
            waiter.cancel()
        }
        waiter.cancel()  // stops the timer
        // Resumed by completion, or by the waiter's token (and then the future may still have won the race).
        if let result { return result }
        if Task.isCancelled { throw CancellationError() }
        throw FutureError.timeout
    }
}
