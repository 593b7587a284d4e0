extension Future {
    /// Suspends until the future completes, and returns its value.
    ///
    /// This is the overload async code picks: it never blocks a thread.
    ///
    /// ```swift
    /// let user = try await fetchUser(id).value()
    /// ```
    ///
    /// ### Waiting
    /// On a pending future it first watches for the result for at most 20 µs, a bounded spin
    /// that yields the core between rounds of polls: a result that comes that soon (a
    /// `Future { async }` that FutureLib's threads finish at once) needs no suspension, whose
    /// wake-up costs about as much on a virtual machine. It does not watch on one core, on
    /// FutureLib's own threads, in a cancelled task, or, after a watch that missed, for the
    /// next 64 waits on the same thread. Then it suspends.
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
    /// let reply = Promise<Int>()  // kept: a dropped promise fails its future with brokenPromise at once
    /// let waiting = Task { try await reply.future.value(timeout: .seconds(5), clock: clock) }
    /// // … once the task waits:
    /// await clock.advanceAndSettle(by: .seconds(5))  // the task throws FutureError.timeout
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
    /// the continuation looks up generic metadata several times (guarded by Benchmarks/Rounds).
    @inlinable
    func awaitResult(timeout: Duration?, clock: any TimerClock = .system) async throws -> Result<Value, any Error> {
        if let result { return result }
        guard let timeout else { return try await awaitResult() }
        // One request for both ways the wait can end early (task cancellation and the timeout);
        // cancelling it removes the continuation from the future.
        let waiter = CancellationRequest()
        waiter.cancel(after: timeout, clock: clock)
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

    /// ``awaitResult(timeout:clock:)`` without a timeout: the result, or `CancellationError` when
    /// the task is cancelled first.
    ///
    /// Only task cancellation can end this wait early, so it needs no `CancellationRequest`: the
    /// task's cancellation handler removes the continuation from the future itself, as a token's
    /// handler would (``CancellableCallback/cancel(removingFrom:)``, under the future's lock, so that exactly
    /// one of completion and cancellation resumes the task). What it buys: no request, no token
    /// registration and no closure context of its own per wait (guarded by Benchmarks/Rounds).
    ///
    /// A watch first: a result that comes within microseconds needs no suspension (``AwaitSpin``).
    @inlinable
    func awaitResult() async throws -> Result<Value, any Error> {
        let seen = AwaitSpin.watch(until: { isCompleted })
        defer { AwaitSpin.endWait() }
        if seen, let result { return result }
        let resumer = AwaitingTask()
        // The callback captures only `resumer`, which is then its closure context: no allocation.
        let cancellable = CancellableCallback<Value>(.result { _ in resumer.resume() })
        await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                // Written before the callback is stored under the future's lock; whoever runs it
                // took it from there (or is this thread, when the future is already complete).
                resumer.continuation = continuation
                // Cancelled before the handler was installed, or before the callback was stored:
                // the handler found nothing to remove, so remove it here (of two calls, one wins).
                if add(target: .synchronous, callback: .cancellable(cancellable)), Task.isCancelled {
                    cancellable.cancel(removingFrom: self)
                }
            }
        } onCancel: {
            cancellable.cancel(removingFrom: self)
        }
        // Resumed by completion, or by the cancellation (and then the future may still have won the race).
        if let result { return result }
        throw CancellationError()
    }
}

/// The suspended task of an `await future.value()`: the callback that the future runs once
/// (with its result, or with `CancellationError` when the task's cancellation removes it)
/// resumes it.
///
/// Unsafe, not checked: the callback runs exactly once, so the checked continuation's extra
/// allocation and its resume-once bookkeeping buy nothing here.
@usableFromInline
final class AwaitingTask: @unchecked Sendable {
    // Sendable: `continuation` is written once, by the awaiting thread before it stores the
    // callback under the future's lock, and read once, by whoever runs the callback, which got it
    // from the future's state under that lock (or by the awaiting thread itself).
    @usableFromInline var continuation: UnsafeContinuation<Void, Never>?

    @inlinable
    init() {}

    @inlinable
    func resume() {
        continuation.unsafelyUnwrapped.resume()
    }
}
