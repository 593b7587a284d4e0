import Dispatch
import FutureLibConcurrencyHelpers

extension CancellationToken {
    /// Blocks the calling thread until cancellation is requested or `timeout` has passed.
    ///
    /// Meant for threads you own, scripts and tests; async code uses ``wait()``.
    ///
    /// ```swift
    /// let request = CancellationRequest(cancelAfter: .milliseconds(50))
    /// let cancelled = request.token.wait(timeout: .seconds(5))  // true, after about 50 ms
    /// ```
    ///
    /// On ``none`` it blocks for the whole timeout and returns `false`.
    ///
    /// Called from work that FutureLib runs (`.default`, a `LimitedExecutionContext`, a
    /// `DispatchQueue`), it blocks the way FutureLib's `Future.value()` does: the pool starts
    /// another thread meanwhile, a capped context's job gives up its slot, and a wait on a
    /// `DispatchQueue` runs the FutureLib work queued on that queue, so the work that would
    /// cancel the token still runs.
    ///
    /// - Parameter timeout: The longest time to block. Negative timeouts count as zero; from
    ///   about 146 years on (`.seconds(Int64.max)` included), it waits until cancellation.
    /// - Returns: `true` if cancellation was requested before the timeout.
    @available(*, noasync, message: "wait(timeout:) blocks the thread; use 'await token.wait()' in async code")
    public func wait(timeout: Duration) -> Bool {
        if isCancellationRequested { return true }
        let semaphore = DispatchSemaphore(value: 0)
        let registration = onCancel { semaphore.signal() }
        let deadline = DispatchTime.now() + timeout.dispatchInterval
        // Inside FutureLib's work, the work that would cancel the token may be queued behind this
        // wait: FutureLib's pool starts another thread meanwhile, and on a serial queue the wait
        // runs that work itself.
        let signalled = ThreadBlocking.wait(for: semaphore, until: deadline) { isCancellationRequested }
        registration.unregister()
        return signalled || isCancellationRequested
    }

    /// Suspends until cancellation is requested, or until the calling task is cancelled.
    ///
    /// It never blocks a thread. Check ``isCancellationRequested`` afterwards when task
    /// cancellation may also have ended the wait.
    ///
    /// ```swift
    /// Task {
    ///     await shutdown.token.wait()
    ///     await server.stop()
    /// }
    /// ```
    ///
    /// On ``none`` or a token that can no longer be cancelled it returns only when the task is cancelled.
    ///
    /// ### Semantics
    /// - Returns at once if the token is already cancelled or the task already is.
    /// - Its handler on the token is removed when it returns, so waiting does not leave anything
    ///   behind on a long-lived token.
    public func wait() async {
        guard !isCancellationRequested else { return }
        let once = ResumeOnce()
        let registration = onCancel { once.resume() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { once.install($0) }
        } onCancel: {
            once.resume()
        }
        registration.unregister()
    }
}
