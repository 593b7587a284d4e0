import FutureLibConcurrencyHelpers

/// A clock that moves only when told to: time-based code tested instantly and deterministically.
///
/// Pass it as `clock:` to any API that waits for time, then move time forward with
/// ``advance(by:)``: every timer that comes due fires inside that call, on the calling thread,
/// so the test reads the effects right after it.
///
/// ```swift
/// let clock = ManualClock()
/// let request = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
/// clock.advance(by: .seconds(29))  // not cancelled
/// clock.advance(by: .seconds(1))   // cancelled; its handlers ran inside advance(by:)
/// #expect(request.isCancellationRequested)
/// ```
///
/// ### Two ways to move time
/// - ``advance(by:)`` fires the timers that come due, on the calling thread, and returns. What
///   they start elsewhere (a continuation on `.default`, a task) may still be running.
/// - ``advanceAndSettle(by:)`` (async) fires them one at a time and, after each, waits until the
///   work it started on FutureLib's own contexts has finished: code that keeps its default `on:`
///   is driven to its end.
///
/// ### Order
/// ``advance(by:)`` fires the due timers in deadline order; timers due at the same instant fire
/// in the order they were armed (a re-armed timer counts as armed when it was re-armed). While a
/// timer fires, ``now`` reads its deadline, so a timer armed from inside it (the next retry's
/// delay, say) is due relative to that instant and fires in the same call if it comes due.
///
/// ### Lifetime
/// A timer on a manual clock holds nothing beyond its request's lifetime rules: no thread, no
/// Dispatch source, only its place in this clock's list until it fires or is cancelled.
public final class ManualClock: TimerClock {
    private let state = Lock(State())

    fileprivate struct State {
        var now = Duration.zero
        /// The instant that the `advance(by:)` calls so far reach: `now` catches up with it.
        var horizon = Duration.zero
        var timers = TimerHeap<ManualTimer>()
        /// The tasks in ``waitForPendingTimers(_:)``, each with the count it waits for.
        var waiters: [PendingTimersWaiter] = []
        /// Waits cancelled before their task stored its continuation.
        var cancelledWaits: Set<UInt64> = []
        var nextWait: UInt64 = 0

        /// Takes out the waiters whose count of pending timers is reached.
        mutating func satisfiedWaiters() -> [PendingTimersWaiter] {
            guard !waiters.isEmpty else { return [] }
            let count = timers.count
            let satisfied = waiters.filter { $0.count <= count }
            if !satisfied.isEmpty { waiters.removeAll { $0.count <= count } }
            return satisfied
        }
    }

    fileprivate struct PendingTimersWaiter {
        var id: UInt64
        var count: Int
        var continuation: UnsafeContinuation<Void, Never>
    }

    /// A clock at ``now`` `.zero` with no timer.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// #expect(clock.now == .zero)
    /// ```
    public init() {
        Quiescence.noteManualClock()  // from now on FutureLib counts its main-queue deliveries
    }

    /// How far the clock has advanced from `.zero`.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// clock.advance(by: .seconds(2))
    /// #expect(clock.now == .seconds(2))
    /// ```
    ///
    /// While ``advance(by:)`` fires a timer, it reads that timer's deadline.
    public var now: Duration {
        state.withLock { $0.now }
    }

    /// Moves the clock forward by `duration` and fires every timer that comes due, before returning.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let deadline = CancellationRequest(cancelAfter: .seconds(5), clock: clock)
    /// clock.advance(by: .seconds(5))
    /// #expect(deadline.isCancellationRequested)  // cancelled inside advance(by:)
    /// ```
    ///
    /// ### Semantics
    /// - Timers fire on the calling thread, in deadline order, ties in the order they were armed,
    ///   each outside the clock's lock (a timer may arm, re-arm or cancel timers of this clock).
    /// - Timers that come due while it runs (armed from a firing timer) fire in this call too.
    /// - A `duration` of zero fires the timers due now; negative durations count as zero.
    /// - Time stops at `.seconds(Int64.max)`: an advance past it, and a deadline beyond it, end
    ///   there (so advancing by any amount, any number of times, never overflows).
    /// - For a deterministic order, advance a clock from one thread at a time.
    ///
    /// - Parameter duration: How far to move the clock.
    public func advance(by duration: Duration) {
        let target = state.withLock { $0.extendHorizon(by: duration) }
        while let fire = state.withLock({ $0.popDue(at: target) }) {
            fire.run()
        }
        state.withLock { $0.now = max($0.now, target) }
    }

    /// Moves the clock forward by `duration`, firing every timer that comes due, and lets the work
    /// each timer starts on FutureLib's own contexts finish before it moves on.
    ///
    /// Code under test keeps its default `on:` (`.default`): a `retry` whose next attempt starts on
    /// FutureLib's pool arms its next delay before this looks for the next due timer, so one call
    /// drives it to the end.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let retried = Future<Int>.retry(maxAttempts: 3, backoff: .constant(.seconds(1)), clock: clock) { _ in
    ///     Future(error: FutureError.timeout)  // each attempt starts on `.default`
    /// }
    /// await clock.advanceAndSettle(by: .seconds(2))  // both retries ran inside this call
    /// #expect(retried.isCompleted)
    /// ```
    ///
    /// ### Semantics
    /// - Before each due timer fires, and before it returns, it waits until FutureLib's own
    ///   contexts are idle: nothing queued or running on `.default` (which also serves
    ///   `LimitedExecutionContext`s on it and the tasks of async closures, `Future { async … }`),
    ///   and no `.mainActor` delivery queued. Then it fires the next due timer, in the order of
    ///   ``advance(by:)``, on the calling task, and waits again. It returns when no timer up to the
    ///   new ``now`` remains due.
    /// - A task suspended (awaiting I/O, a real-time sleep, a future) is idle; when it resumes on
    ///   FutureLib's pool, it is work in flight again.
    /// - Not waited for: work on the caller's own `DispatchQueue`s, `Task`s and actors, contexts
    ///   of its own (a `LimitedExecutionContext` on a queue of its own, say), and async
    ///   closures on `.mainActor`. A pool thread blocked in `value()` or `wait(timeout:)` counts
    ///   as idle: it waits for something else, which may be this clock.
    /// - Without FutureLib in the process it fires what ``advance(by:)`` fires, in the same order. It needs the main queue serviced
    ///   only while `.mainActor` deliveries are in flight.
    ///
    /// - Parameter duration: How far to move the clock. Negative durations count as zero; time stops
    ///   at `.seconds(Int64.max)`, as in ``advance(by:)``.
    public func advanceAndSettle(by duration: Duration) async {
        let target = state.withLock { $0.extendHorizon(by: duration) }
        while true {
            await Quiescence.wait()
            guard let fire = state.withLock({ $0.popDue(at: target) }) else { break }
            fire.run()
        }
        state.withLock { $0.now = max($0.now, target) }
    }

    /// Starts a timer due `delay` from ``now``; it fires inside the ``advance(by:)`` that reaches it.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let timer = clock.makeTimer(after: .seconds(1)) { print("fired") }
    /// clock.advance(by: .seconds(1))  // prints "fired"
    /// ```
    ///
    /// - Parameters:
    ///   - delay: How long from now. Negative delays count as zero: due at the next `advance(by:)`.
    ///   - fire: What to run when the timer comes due.
    /// - Returns: The timer.
    public func makeTimer(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> any ClockTimer {
        let timer = ManualTimer(clock: self, fire: fire)
        schedule(timer, after: delay)
        return timer
    }

    /// How many timers are waiting to come due: armed, not yet fired, not cancelled.
    ///
    /// A test checks with it that nothing is left behind:
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let request = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
    /// #expect(clock.pendingTimerCount == 1)
    /// request.cancel()
    /// #expect(clock.pendingTimerCount == 0)  // cancelling stopped the timer
    /// ```
    public var pendingTimerCount: Int {
        state.withLock { $0.timers.count }
    }

    /// Waits until at least `count` timers are pending: until code running elsewhere (a task, a
    /// future's work) armed the timer that a test is about to move the clock past.
    ///
    /// An ``advance(by:)`` fires only the timers armed before it. When the code under test arms
    /// its timer in a task, the test waits for it first:
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let reply = Promise<Int>()
    /// let waiting = Task { try await reply.future.value(timeout: .seconds(5), clock: clock) }
    /// await clock.waitForPendingTimers()   // the task is waiting, its deadline armed
    /// await clock.advanceAndSettle(by: .seconds(5)) // so this fires it: the task throws FutureError.timeout
    /// ```
    ///
    /// ### Semantics
    /// - It comes back at once when `count` timers are pending already; else when a timer armed
    ///   (or re-armed) brings the count to `count`. It counts timers, whoever armed them.
    /// - It comes back when the waiting task is cancelled, too: check `Task.isCancelled` if it
    ///   matters.
    /// - It never moves the clock.
    ///
    /// - Parameter count: How many pending timers to wait for. Defaults to 1.
    public func waitForPendingTimers(_ count: Int = 1) async {
        let id = state.withLock { state -> UInt64? in
            guard state.timers.count < count else { return nil }
            defer { state.nextWait += 1 }
            return state.nextWait
        }
        guard let id else { return }
        await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.cancelledWaits.remove(id) != nil || state.timers.count >= count { return true }
                    state.waiters.append(PendingTimersWaiter(id: id, count: count, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> PendingTimersWaiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                    state.cancelledWaits.insert(id)  // before the continuation was stored, or already resumed
                    return nil
                }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
        // A cancellation after it was resumed left its id. No `onCancel` can still be running here: the
        // runtime runs it under the task's status-record lock, and removing the handler's record on
        // the way out of `withTaskCancellationHandler` waits for that lock (TaskStatus.cpp,
        // `swift_task_cancel` and `removeStatusRecord`).
        state.withLock { _ = $0.cancelledWaits.remove(id) }
    }

    fileprivate func schedule(_ timer: ManualTimer, after delay: Duration) {
        let satisfied = state.withLock { state -> [PendingTimersWaiter] in
            guard !timer.isCancelled else { return [] }
            state.timers.schedule(timer, at: state.now.advanced(byDelay: delay))
            return state.satisfiedWaiters()
        }
        for waiter in satisfied { waiter.continuation.resume() }  // outside the lock
    }

    /// The deadline `timer` is scheduled for (or was, once it fired), read under the clock's lock.
    fileprivate func deadline(of timer: ManualTimer) -> Duration {
        state.withLock { _ in timer.deadline }
    }

    fileprivate func cancel(_ timer: ManualTimer) {
        let fire = state.withLock { state in
            state.timers.remove(timer)
            return timer.takeFire()
        }
        _ = consume fire  // released here, outside the lock: its closure's captures may run user `deinit`s
    }
}

extension ManualClock.State {
    /// Moves the instant that the advances so far reach by `duration` (negative counting as zero),
    /// saturated at ``Duration/endOfTime``, and returns it: the target of an advance.
    fileprivate mutating func extendHorizon(by duration: Duration) -> Duration {
        horizon = max(horizon, now).advanced(byDelay: duration)
        return horizon
    }

    /// Takes out the earliest timer due at `target` or before, moves `now` to its deadline, and
    /// returns what it runs.
    fileprivate mutating func popDue(at target: Duration) -> TimerFire? {
        while let due = timers.popDue(at: target) {
            now = max(now, due.deadline)
            if let fire = due.peekFire() { return fire }  // a cancelled timer is never in the heap
        }
        return nil
    }
}

/// A timer of a ``ManualClock``: its place in the clock's heap, and what to run.
///
/// It reaches its clock weakly: the clock's heap holds the timer, and a strong reference back
/// would keep a clock that nobody holds, with every timer it can no longer fire, for good. Once
/// the clock is gone, nothing can advance it: rescheduling and cancelling do nothing, and the
/// closure goes with the timer.
final class ManualTimer: HeapTimer, ClockTimer, @unchecked Sendable {
    // Sendable: `clock` is a constant (a weak reference, which is atomic); the rest is
    // `HeapTimer`'s, read only under the clock's lock.

    private weak let clock: ManualClock?

    init(clock: ManualClock, fire: @escaping @Sendable () -> Void) {
        self.clock = clock
        super.init(fire: fire)
    }

    func reschedule(after delay: Duration) {
        clock?.schedule(self, after: delay)
    }

    func cancel() {
        clock?.cancel(self)
    }

    /// The instant, on the clock's ``ManualClock/now``, at which it is due (or was, once it fired);
    /// nil once the clock is gone.
    var scheduledDeadline: Duration? {
        clock?.deadline(of: self)
    }
}
