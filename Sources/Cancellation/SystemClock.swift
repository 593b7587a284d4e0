import Dispatch
import Synchronization

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
/// `fire` closure runs there: keep it short, a slow one delays the timers behind it.
public struct SystemClock: TimerClock {
    /// The real clock.
    ///
    /// ```swift
    /// let clock = SystemClock()
    /// ```
    public init() {}

    /// Starts a Dispatch timer on FutureLib's timer queue.
    ///
    /// ```swift
    /// let timer = SystemClock().makeTimer(after: .milliseconds(10)) { print("fired") }
    /// ```
    ///
    /// - Parameters:
    ///   - delay: How long from now. Negative delays count as zero; delays too long for Dispatch
    ///     never fire.
    ///   - fire: What to run on the timer queue at the deadline.
    /// - Returns: The timer.
    public func makeTimer(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> any ClockTimer {
        DispatchTimer(after: delay, fire)
    }

    /// Where every timer of this clock fires: one serial queue of the package's.
    ///
    /// Not `DispatchQueue.global()`: that pool has about one thread per core, and user work that
    /// blocks them (or floods it) delayed timers by seconds in the test suite. A serial queue
    /// created here targets Dispatch's overcommit pool, which gives it a thread of its own
    /// whatever the global queues are doing. Handlers should be short (they always should:
    /// they delay the caller of `cancel()`); a slow one delays the timers behind it.
    static let queue = DispatchQueue(label: "FutureLib.timers", qos: .userInitiated)

    /// How many timers Dispatch still holds: made and not yet stopped and released. For the tests
    /// that check that nothing is left behind.
    static let pending = Atomic<Int>(0)
}

/// A timer of the ``SystemClock``: a Dispatch timer source on the timer queue.
private final class DispatchTimer: ClockTimer, @unchecked Sendable {
    // Sendable: a Dispatch source may be scheduled and cancelled from any thread; `source` never changes.
    private let source: any DispatchSourceTimer

    init(after delay: Duration, _ fire: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: SystemClock.queue)
        source.setEventHandler(handler: fire)
        source.setCancelHandler { SystemClock.pending.subtract(1, ordering: .relaxed) }
        SystemClock.pending.add(1, ordering: .relaxed)
        source.schedule(deadline: .now() + delay.dispatchInterval)
        source.activate()
    }

    func reschedule(after delay: Duration) {
        source.schedule(deadline: .now() + delay.dispatchInterval)  // does nothing once cancelled
    }

    func cancel() {
        source.cancel()
    }
}
