import Dispatch
import FutureLibConcurrencyHelpers

/// The real clock, and the default `clock:` of every API that waits for time.
///
/// It measures Dispatch's uptime, which (like `SuspendingClock`) does not advance while the
/// machine sleeps. Spell it ``TimerClock/system``:
///
/// ```swift
/// let deadline = CancellationRequest(cancelAfter: .seconds(5), clock: .system)  // the same as without `clock:`
/// ```
///
/// ### Where timers fire
/// On FutureLib's serial timer queue, which has a thread of its own: not the cooperative pool,
/// not `DispatchQueue.global()`, so user work that blocks those cannot delay a timer. A timer's
/// `fire` closure runs there: keep it short, a slow one delays the timers behind it. Timers due
/// at the same instant fire in the order they were armed.
public struct SystemClock: TimerClock {
    /// The real clock.
    ///
    /// ```swift
    /// let clock = SystemClock()
    /// ```
    public init() {}

    /// Starts a timer that fires on FutureLib's timer queue.
    ///
    /// ```swift
    /// let timer = SystemClock().makeTimer(after: .milliseconds(10)) { print("fired") }
    /// ```
    ///
    /// - Parameters:
    ///   - delay: How long from now. Negative delays count as zero; delays too long for Dispatch
    ///     (over about 292 years, up to `.seconds(Int64.max)` and beyond) never fire.
    ///   - fire: What to run on the timer queue at the deadline.
    /// - Returns: The timer.
    public func makeTimer(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> any ClockTimer {
        let timer = SystemTimer(fire: fire)
        SystemTimers.shared.schedule(timer, after: delay)
        return timer
    }

    /// The time since the system booted, on Dispatch's uptime clock, which is what this clock's timers
    /// and deadlines are measured on.
    ///
    /// ```swift
    /// let request = CancellationRequest(cancelAfter: .seconds(5))
    /// if let deadline = request.token.deadline {
    ///     #expect(deadline.instant - SystemClock().now <= .seconds(5))
    /// }
    /// ```
    ///
    /// Like the timers, it does not advance while the machine sleeps.
    public var now: Duration {
        SystemTimers.now
    }

    /// Where every timer of this clock fires: one serial queue of the package's.
    ///
    /// Not `DispatchQueue.global()`: that pool has about one thread per core, and user work that
    /// blocks them (or floods it) delayed timers by seconds in the test suite. A serial queue
    /// created here targets Dispatch's overcommit pool, which gives it a thread of its own
    /// whatever the global queues are doing. Handlers should be short (they always should:
    /// they delay the caller of `cancel()`); a slow one delays the timers behind it.
    static let queue = DispatchQueue(label: "FutureLib.timers", qos: .userInitiated)

    /// How many timers of the system clock are waiting to come due, process-wide: armed, not yet
    /// fired, not stopped.
    ///
    /// A server checks with it, in a soak or a debug endpoint, that the deadlines of finished
    /// requests are not left behind:
    ///
    /// ```swift
    /// let request = CancellationRequest(cancelAfter: .seconds(30))
    /// print(SystemClock().pendingTimerCount)  // 1 in a process that arms no other timer
    /// request.cancel()
    /// print(SystemClock().pendingTimerCount)  // 0: cancelling stopped the timer
    /// ```
    ///
    /// Every ``SystemClock`` shares one timer queue, so this counts the timers of the whole process
    /// (other threads may arm and stop theirs meanwhile). It takes the timer queue's lock: for
    /// checks and diagnostics, not for a hot path.
    public var pendingTimerCount: Int { SystemTimers.shared.count }
}

/// Every pending timer of the ``SystemClock``, in one heap, and one Dispatch timer source set to
/// the earliest deadline.
///
/// One source for all timers rather than one each: arming a timer is a heap insertion under a
/// lock (no Dispatch source to create, activate and later cancel on the queue), and a stopped
/// timer leaves the heap and is released at once, so a server that makes and drops a deadline
/// per request holds memory for the pending ones only. Timers due at the same instant fire in
/// the order they were armed, as on a ``ManualClock``.
private final class SystemTimers: @unchecked Sendable {
    // Sendable: `state` is a lock; the source is scheduled only with that lock held, and its
    // event handler runs on the serial timer queue.
    static let shared = SystemTimers()

    private struct State {
        var timers = TimerHeap<SystemTimer>()
        /// The deadline the source is set to, if it is set: a later timer needs no new schedule.
        var armed: Duration?
    }

    private let state = Lock(State())
    private let source: any DispatchSourceTimer

    private init() {
        source = DispatchSource.makeTimerSource(queue: SystemClock.queue)
        source.setEventHandler { SystemTimers.shared.fireDue() }
        source.activate()
    }

    var count: Int { state.withLock { $0.timers.count } }

    /// Now, on Dispatch's uptime clock.
    static var now: Duration {
        .nanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds))
    }

    /// Gives `timer`, made without a closure (``SystemTimer/init()``), its closure and schedules it.
    func start(_ timer: SystemTimer, after delay: Duration, _ fire: @escaping @Sendable () -> Void) {
        let deadline = Self.now.advanced(byDelay: delay)
        state.withLock { state in
            timer.setFire(fire)
            state.timers.schedule(timer, at: deadline)
            rearm(&state)
        }
    }

    func schedule(_ timer: SystemTimer, after delay: Duration) {
        let deadline = Self.now.advanced(byDelay: delay)
        state.withLock { state in
            guard !timer.isCancelled else { return }
            state.timers.schedule(timer, at: deadline)
            rearm(&state)
        }
    }

    /// The deadline `timer` is scheduled for (or was, once it fired), read under the lock that
    /// scheduling writes it under.
    func deadline(of timer: SystemTimer) -> Duration {
        state.withLock { _ in timer.deadline }
    }

    func cancel(_ timer: SystemTimer) {
        let fire = state.withLock { state in
            state.timers.remove(timer)  // the source may stay set to its deadline: a harmless early wake-up
            return timer.takeFire()
        }
        _ = consume fire  // released here, outside the lock: its closure's captures may run user `deinit`s
    }

    /// Sets the source to the earliest deadline if it is not set to that or earlier. With the lock
    /// held: scheduling a Dispatch source runs no user code, and doing it in the same critical
    /// section keeps concurrent arming calls from leaving the source set too late.
    private func rearm(_ state: inout State) {
        guard let earliest = state.timers.earliestDeadline else { return }
        if let armed = state.armed, armed <= earliest { return }
        state.armed = earliest
        source.schedule(deadline: Self.dispatchTime(earliest))
    }

    /// On the timer queue: fires every timer that is due, earliest first, each outside the lock,
    /// then sets the source to the next deadline.
    private func fireDue() {
        while let fire = state.withLock({ state -> TimerFire? in
            if let due = state.timers.popDue(at: Self.now), let fire = due.peekFire() { return fire }
            state.armed = nil
            rearm(&state)
            return nil
        }) {
            fire.run()
        }
    }

    /// `deadline` (from zero to ``Duration/endOfTime``) on Dispatch's uptime clock; one that
    /// Dispatch cannot represent is `.distantFuture`: never.
    private static func dispatchTime(_ deadline: Duration) -> DispatchTime {
        guard deadline < .seconds(Int64(UInt64.max / 2 / 1_000_000_000)) else { return .distantFuture }
        let (seconds, attoseconds) = deadline.components
        return DispatchTime(
            uptimeNanoseconds: UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
        )
    }
}

/// A timer of the ``SystemClock``: its place in the heap of ``SystemTimers``, and what to run.
///
/// Not final: a request's ``Attachments`` is one, made with ``init()`` and started with
/// ``start(after:_:)``, so that a request's deadline on the system clock allocates no timer of
/// its own (guarded by AllocationCheck `request-deadline`).
class SystemTimer: HeapTimer, ClockTimer, @unchecked Sendable {
    // Sendable: no state of its own; `HeapTimer`'s is read only under the lock of `SystemTimers`.

    /// Gives a timer made by ``init()`` its closure and schedules it, `delay` from now: once.
    final func start(after delay: Duration, _ fire: @escaping @Sendable () -> Void) {
        SystemTimers.shared.start(self, after: delay, fire)
    }

    final func reschedule(after delay: Duration) {
        SystemTimers.shared.schedule(self, after: delay)
    }

    final func cancel() {
        SystemTimers.shared.cancel(self)
    }

    /// The instant, on ``SystemClock/now``, at which it is due (or was, once it fired).
    final var scheduledDeadline: Duration {
        SystemTimers.shared.deadline(of: self)
    }
}
