/// The instant at which a timer will cancel a token, on the clock that timer runs on: what
/// ``CancellationToken/deadline`` gives.
///
/// Read what is left of it with ``remaining``, on its clock; that is what a client writes on the
/// wire (a `grpc-timeout`, a `Connect-Timeout-Ms` header), and what the next hop's token starts from.
///
/// ```swift
/// let clock = ManualClock()
/// let request = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
/// clock.advance(by: .seconds(10))
/// let deadline = request.token.deadline!
/// #expect(deadline.instant == .seconds(30))    // on the clock's own scale
/// #expect(deadline.remaining == .seconds(20))  // exact on a ManualClock
/// ```
///
/// ### Semantics
/// - ``instant`` is on ``clock``'s scale (its ``TimerClock/now``), and only comparable with
///   instants of the same clock. Deadlines on different clocks compare by what remains of them.
/// - ``remaining`` is never negative: `.zero` once the instant has passed; and never more than
///   `.seconds(Int64.max)`, however far away the instant.
/// - It is a value read at one moment: re-arming the request later (``CancellationRequest/cancel(after:)``)
///   does not move a deadline already read; read the token's ``CancellationToken/deadline`` again.
public struct CancellationDeadline: Sendable {
    /// The instant, on ``clock``'s ``TimerClock/now`` scale, at which the timer is due.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let request = CancellationRequest(cancelAfter: .seconds(5), clock: clock)
    /// #expect(request.token.deadline?.instant == .seconds(5))
    /// ```
    public let instant: Duration

    /// The clock the instant is on, and that measures ``remaining``.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let request = CancellationRequest(cancelAfter: .seconds(5), clock: clock)
    /// #expect(request.token.deadline?.clock is ManualClock)
    /// ```
    public let clock: any TimerClock

    /// A deadline at `instant` on `clock`: for a deadline measured elsewhere, or to compare with.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let deadline = CancellationDeadline(instant: clock.now + .seconds(2), clock: clock)
    /// #expect(deadline.remaining == .seconds(2))
    /// ```
    ///
    /// - Parameters:
    ///   - instant: The instant, on `clock`'s ``TimerClock/now`` scale.
    ///   - clock: The clock that measures it.
    public init(instant: Duration, clock: any TimerClock) {
        self.instant = instant
        self.clock = clock
    }

    /// What is left until ``instant``, measured now on ``clock``: never negative, `.zero` once it passed.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let deadline = CancellationDeadline(instant: .seconds(2), clock: clock)
    /// clock.advance(by: .seconds(5))
    /// #expect(deadline.remaining == .zero)
    /// ```
    ///
    /// Reads the clock each time (on a ``ManualClock``, under its lock). Never traps, whatever a
    /// clock of your own returns as its `now`: at most `.seconds(Int64.max)`, the longest duration
    /// whose `components` do not trap.
    public var remaining: Duration {
        Self.remaining(until: instant, from: clock.now)
    }

    /// Whether ``instant`` has passed on ``clock``: ``remaining`` is `.zero`.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let deadline = CancellationDeadline(instant: .seconds(1), clock: clock)
    /// clock.advance(by: .seconds(1))
    /// #expect(deadline.hasPassed)
    /// ```
    public var hasPassed: Bool {
        remaining == .zero
    }

    // MARK: - Internal

    /// What ``CancellationToken/deadline`` gives once cancellation was requested: a deadline that
    /// has passed (the system clock's origin), whatever the token's timer was.
    static var passed: CancellationDeadline {
        CancellationDeadline(instant: .zero, clock: SystemClock())
    }

    /// `instant - now`, from `.zero` up to ``Duration/endOfTime``, for instants and `now`s anywhere
    /// in `Duration`'s range: never a trap, and never a duration whose `components` trap (a client
    /// turns it into a wire timeout through them).
    static func remaining(until instant: Duration, from now: Duration) -> Duration {
        let (difference, overflow) = instant.attoseconds.subtractingReportingOverflow(now.attoseconds)
        if overflow { return instant > now ? .endOfTime : .zero }
        return difference > 0 ? min(Duration(attoseconds: difference), .endOfTime) : .zero
    }

    /// Whether this deadline comes before `other`: by instant on the same clock, else by what remains.
    func isEarlier(than other: CancellationDeadline) -> Bool {
        if isSameClock(clock, other.clock) { return instant < other.instant }
        return remaining < other.remaining
    }

    /// The earlier of two deadlines; nil stands for none, so the other wins.
    static func earliest(_ first: CancellationDeadline?, _ second: CancellationDeadline?) -> CancellationDeadline? {
        guard let first else { return second }
        guard let second else { return first }
        return second.isEarlier(than: first) ? second : first
    }

    /// The later of two deadlines, both present.
    static func latest(_ first: CancellationDeadline, _ second: CancellationDeadline) -> CancellationDeadline {
        first.isEarlier(than: second) ? second : first
    }
}
