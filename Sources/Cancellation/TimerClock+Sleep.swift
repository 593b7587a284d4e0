import FutureLibConcurrencyHelpers

extension TimerClock {
    /// Suspends the calling task for `duration` on this clock; throws `CancellationError` at once
    /// when the task is cancelled.
    ///
    /// Code that takes a `clock:` sleeps on it, so a test moves its time with a ``ManualClock``:
    ///
    /// ```swift
    /// func poll(every interval: Duration, clock: some TimerClock = .system) async throws {
    ///     while true {
    ///         try await clock.sleep(for: interval)
    ///         print("polling")
    ///     }
    /// }
    /// ```
    ///
    /// ### Why not `Task.sleep`
    /// A task's `Task.sleep` resumes through Swift's global executor, which on Linux needs a free
    /// thread of the cooperative pool. While every one of those threads blocks (synchronous Swift
    /// Testing tests waiting in `value()`, say), the sleeping task waits until Dispatch adds a
    /// thread, about a second later. A clock's sleep resumes the task from the clock's timer
    /// (FutureLib's timer queue for ``SystemClock``, ``ManualClock/advance(by:)`` for a manual
    /// clock), straight onto the task's executor: inside `Future { async … }`, FutureLib's own
    /// threads.
    ///
    /// ### Semantics
    /// - Returns once the clock reached `duration` from now: on a ``ManualClock``, inside the
    ///   ``ManualClock/advance(by:)`` that reaches it. A duration of zero or less waits for the
    ///   clock's next chance (the next `advance(by:)` of a manual clock).
    /// - When the task is cancelled, before or during the sleep, throws `CancellationError` at once
    ///   and stops the timer; nothing is left pending on the clock.
    ///
    /// - Parameter duration: How long to sleep.
    /// - Throws: `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let sleep = Sleep()
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                sleep.start(continuation, on: self, for: duration)
            }
        } onCancel: {
            sleep.cancel()
        }
    }
}

/// One ``TimerClock/sleep(for:)``: the suspended task's continuation, resumed once, by the timer or
/// by the task's cancellation, whichever comes first, outside the lock.
private final class Sleep: Sendable {
    private struct State {
        var continuation: UnsafeContinuation<Void, any Error>?
        var timer: (any ClockTimer)?
        var isCancelled = false
    }

    private let state = Lock(State())

    /// Stores `continuation` and starts the timer, unless the task was cancelled meanwhile.
    func start(_ continuation: UnsafeContinuation<Void, any Error>, on clock: some TimerClock, for duration: Duration) {
        let cancelled = state.withLock { state in
            if !state.isCancelled { state.continuation = continuation }
            return state.isCancelled
        }
        if cancelled { return continuation.resume(throwing: CancellationError()) }
        let timer = clock.makeTimer(after: duration) { self.fire() }
        let stale = state.withLock { state -> (any ClockTimer)? in
            guard state.continuation != nil else { return timer }  // fired or cancelled already
            state.timer = timer
            return nil
        }
        stale?.cancel()
    }

    /// The timer fired: the task goes on.
    private func fire() {
        // The timer is taken out and released after the lock, not released inside it.
        let (continuation, timer) = state.withLock { state in
            (state.continuation.take(), state.timer.take())
        }
        withExtendedLifetime(timer) {}
        continuation?.resume()
    }

    /// The task was cancelled: stops the timer and throws in the task.
    func cancel() {
        let (continuation, timer) = state.withLock { state in
            state.isCancelled = true
            return (state.continuation.take(), state.timer.take())
        }
        timer?.cancel()
        continuation?.resume(throwing: CancellationError())
    }
}
