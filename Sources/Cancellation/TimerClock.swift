/// A source of time that starts timers: what every API that waits for time takes as `clock:`.
///
/// Two clocks come with the package: ``SystemClock`` (``system``), the default everywhere, whose
/// timers fire on FutureLib's timer queue, and ``ManualClock``, which moves only when a test
/// tells it to. Conform your own type to plug in another source of time:
///
/// ```swift
/// let clock = ManualClock()
/// let deadline = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
/// clock.advance(by: .seconds(30))  // cancelled: its handlers ran inside advance(by:)
/// ```
///
/// ### Conforming
/// A clock needs one method: start a timer that calls `fire` once, `delay` from now. The timer
/// it returns can be moved (``ClockTimer/reschedule(after:)``) and stopped (``ClockTimer/cancel()``).
/// The library calls these outside its locks, possibly from several threads at once, and calls
/// ``ClockTimer/cancel()`` from inside `fire` too: a request stops its timer as the timer cancels
/// it. See ``ClockTimer`` for what a timer must guarantee, and the guide
/// `Documentation/Testing.md` for a clock built on `ContinuousClock` and tasks.
///
/// ### Cost
/// A request without a timer never touches its clock. The default ``system`` clock keeps its
/// pending timers in one heap behind a single Dispatch timer source (arming one is a heap
/// insertion, and a stopped one is freed at once); ``ManualClock`` keeps its timers in a heap
/// too, and creates no thread and no Dispatch source.
public protocol TimerClock: Sendable {
    /// Starts a timer that calls `fire` once, `delay` from now, unless it is cancelled first.
    ///
    /// ```swift
    /// let timer = ManualClock().makeTimer(after: .seconds(1)) { print("fired") }
    /// timer.cancel()
    /// ```
    ///
    /// - Parameters:
    ///   - delay: How long from now; zero or less means as soon as the clock can.
    ///   - fire: What to run at the deadline; the clock calls it once per deadline reached, outside
    ///     any lock of its own.
    /// - Returns: The timer, to move or stop it.
    func makeTimer(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> any ClockTimer

    /// The clock's current instant, as the time since its own origin: what a token's
    /// ``CancellationToken/deadline`` is measured on.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// clock.advance(by: .seconds(3))
    /// #expect(clock.now == .seconds(3))
    /// ```
    ///
    /// A deadline armed on this clock is `now` plus its delay, and what remains of it is that
    /// instant minus `now`, so only differences matter: the origin is the clock's to choose.
    /// ``ManualClock`` and ``SystemClock`` give it exactly. The default, for a clock that does not,
    /// is the system clock's `now`: right for any clock whose timers run in real time; a clock
    /// that moves otherwise should give its own, or its tokens' remaining time moves in real time.
    var now: Duration { get }
}

extension TimerClock {
    /// The system clock's current instant: the default for a clock that does not give its own.
    ///
    /// ```swift
    /// struct RealTimeClock: TimerClock {
    ///     func makeTimer(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> any ClockTimer {
    ///         SystemClock().makeTimer(after: delay, fire)
    ///     }
    /// }
    /// let earlier = RealTimeClock().now
    /// #expect(RealTimeClock().now >= earlier)  // the system clock's uptime
    /// ```
    public var now: Duration { SystemClock().now }
}

/// A timer started by a ``TimerClock``.
///
/// ```swift
/// let clock = ManualClock()
/// let timer = clock.makeTimer(after: .seconds(5)) { print("fired") }
/// timer.reschedule(after: .seconds(10))  // now due 10 s from now
/// timer.cancel()                          // never fires
/// ```
///
/// ### What a timer guarantees
/// - `fire` runs once each time a deadline is reached: after ``reschedule(after:)`` moved a
///   timer that already fired, it fires again at the new deadline.
/// - After ``cancel()`` returns, `fire` is never started again, ``reschedule(after:)`` does
///   nothing, and the timer lets go of `fire` (the built-in clocks at once).
/// - Both methods may be called from any thread, concurrently with the timer firing, and from
///   inside `fire` (so `fire` runs outside any lock of the clock's).
public protocol ClockTimer: AnyObject, Sendable {
    /// Moves the deadline to `delay` from now; a later call wins.
    ///
    /// ```swift
    /// let timer = ManualClock().makeTimer(after: .seconds(5)) { print("fired") }
    /// timer.reschedule(after: .seconds(30))
    /// ```
    ///
    /// - Parameter delay: How long from now; zero or less means as soon as the clock can.
    func reschedule(after delay: Duration)

    /// Stops the timer for good and lets go of its `fire` closure.
    ///
    /// ```swift
    /// let timer = ManualClock().makeTimer(after: .seconds(5)) { print("fired") }
    /// timer.cancel()
    /// ```
    func cancel()
}

extension TimerClock where Self == SystemClock {
    /// The real clock: the default `clock:` of every API that waits for time.
    ///
    /// ```swift
    /// let request = CancellationRequest(cancelAfter: .seconds(5), clock: .system)
    /// ```
    public static var system: SystemClock { SystemClock() }
}

/// Whether two clocks are known to be the same one, so that a timer of `first` can stand for a
/// timer of `second`: both the system clock, or the same object. (A "no" only costs a new timer.)
func isSameClock(_ first: any TimerClock, _ second: any TimerClock) -> Bool {
    if first is SystemClock, second is SystemClock { return true }
    guard type(of: first) is AnyObject.Type, type(of: second) is AnyObject.Type else { return false }
    return (first as AnyObject) === (second as AnyObject)
}
