// `timeout`: a stream that goes quiet for too long fails with `FutureError.timeout` and ends.

extension FutureStream {
    /// Fails the new stream with ``FutureError/timeout`` and finishes it when no result arrives
    /// for `interval` on `clock` (from the call, then from each result).
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let heartbeats = StreamPromise<Int>()
    /// let watched = heartbeats.stream.timeout(after: .seconds(30), clock: clock)
    /// clock.advance(by: .seconds(30))  // no heartbeat: `watched` gets FutureError.timeout and ends
    /// ```
    ///
    /// ```
    /// time:    0  1  2  3  4  5  6      (after 2)
    /// source:  a  b     c        d
    /// output:  a  b     c     ✕t|
    /// ```
    ///
    /// ### Semantics (RxSwift's `timeout`, per result)
    /// - Every result (a value or an error) passes through and restarts the wait.
    /// - When the wait runs out, the new stream gets ``FutureError/timeout``, finishes and leaves
    ///   this stream. This stream finishing first finishes it and stops the timer.
    /// - `cancellationToken` cancelled, or the new stream released: the timer is stopped.
    ///
    /// ### Cost
    /// One timer per stage, made at the call. A result only moves the deadline (a read of
    /// ``TimerClock/now``); the timer, when it fires before that deadline, is set again for the
    /// rest. So a clock of your own must give its own `now`, on the time its timers use, unless its
    /// timers run in real time (the default `now` is the system clock's).
    ///
    /// - Parameters:
    ///   - interval: The longest wait for a result. Negative counts as zero.
    ///   - clock: The clock that times it. Defaults to the system clock.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of this stream's results, ended by a timeout.
    @inlinable
    public func timeout(
        after interval: Duration,
        clock: some TimerClock = .system,
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<Value> {
        let interval = max(interval, .zero)
        let machine = StageMachine<TimeoutState<Value>, Value>(TimeoutState())
        // Carries out what an event decided about the timer, outside the machine's lock.
        @Sendable func perform(_ action: TimeoutState<Value>.TimerAction, for watched: FutureStream<Value>?) {
            switch action {
            case .none:
                return
            case .set(let timer, let delay):
                timer.reschedule(after: delay)
            case .stop(let timer):
                timer.cancel()
            case .make:
                let timer = clock.makeTimer(after: interval) { [weak watched] in
                    let now = clock.now
                    let action = machine.handle(watched) { state, outbox in state.fire(at: now, into: &outbox) }
                    perform(action, for: watched)
                }
                let now = clock.now
                perform(machine.handle(nil) { state, _ in state.made(timer, at: now) }, for: watched)
            }
        }
        let watched: FutureStream<Value> = derive(
            on: .synchronous,
            cancellationToken: cancellationToken,
            { result, watched in
                let deadline = clock.now + interval
                let action = machine.handle(watched) { state, outbox in
                    state.receive(result, until: deadline, into: &outbox)
                }
                perform(action, for: watched)
            },
            finished: { watched in
                machine.finish(watched) { state, outbox in state.finish(into: &outbox) }
            }
        )
        if watched.isFinished { return watched }
        let deadline = clock.now + interval
        perform(machine.handle(nil) { state, _ in state.start(until: deadline) }, for: watched)
        watched.onEnd { machine.handle(nil) { state, _ in state.end() }?.cancel() }
        return watched
    }
}

/// `timeout`'s state: the deadline of the current wait, and the one timer that waits for it.
///
/// As `debounce`'s: the timer is made once, outside the lock; a result that arrives while it is
/// set only moves the deadline, and the timer, firing before the deadline, is set again for the
/// rest.
@usableFromInline
struct TimeoutState<Value: Sendable>: Sendable {
    /// What to do with the timer once the lock is released.
    @usableFromInline
    enum TimerAction: Sendable {
        case none
        /// Make the timer, due `interval` from now, and give it to ``made(_:at:)``.
        case make
        /// Set the timer again, due `after` from now.
        case set(any ClockTimer, after: Duration)
        /// Stop it: the stage has ended.
        case stop(any ClockTimer)
    }

    /// When the current wait runs out, on the clock's ``TimerClock/now``.
    @usableFromInline var deadline = Duration.zero
    /// The timer, once made.
    @usableFromInline var timer: (any ClockTimer)?
    /// Whether the first wait has started (the timer is made, or being made).
    @usableFromInline var isStarted = false
    /// Whether a result moved the deadline since the timer was set.
    @usableFromInline var isDeadlineMoved = false
    /// Whether the timer, once made, must be set for `deadline` (it fired before it was kept, and
    /// the deadline had moved).
    @usableFromInline var setsTimerWhenMade = false
    @usableFromInline var isDone = false

    @inlinable
    init() {}

    /// The first wait, until `deadline`, unless a kept result started it already.
    @inlinable
    mutating func start(until deadline: Duration) -> TimerAction {
        guard !isDone, !isStarted else { return .none }
        isStarted = true
        self.deadline = deadline
        return .make
    }

    /// Passes `result` on; the wait runs until `deadline` now.
    @inlinable
    mutating func receive(
        _ result: Result<Value, any Error>,
        until deadline: Duration,
        into outbox: inout [StageOutput<Value>]
    ) -> TimerAction {
        guard !isDone else { return .none }
        outbox.append(.result(result))
        self.deadline = deadline
        guard isStarted else {
            isStarted = true
            return .make
        }
        isDeadlineMoved = true
        return .none
    }

    /// The timer of the first wait is made, `now` read after.
    @inlinable
    mutating func made(_ timer: any ClockTimer, at now: Duration) -> TimerAction {
        guard !isDone else { return .stop(timer) }
        self.timer = timer
        guard setsTimerWhenMade else { return .none }
        setsTimerWhenMade = false
        return .set(timer, after: deadline - now)
    }

    /// The timer fired, the clock at `now`: the timeout if the wait ran out, else the timer is set
    /// again for the rest of it.
    @inlinable
    mutating func fire(at now: Duration, into outbox: inout [StageOutput<Value>]) -> TimerAction {
        guard !isDone else { return .none }
        if isDeadlineMoved, now < deadline {
            isDeadlineMoved = false
            if let timer { return .set(timer, after: deadline - now) }
            setsTimerWhenMade = true  // fired before it was kept: its maker sets it
            return .none
        }
        isDone = true
        timer = nil
        outbox.append(.result(.failure(FutureError.timeout)))
        outbox.append(.finish)
        return .none
    }

    @inlinable
    mutating func finish(into outbox: inout [StageOutput<Value>]) -> (any ClockTimer)? {
        guard !isDone else { return nil }
        isDone = true
        outbox.append(.finish)
        return timer.take()
    }

    @inlinable
    mutating func end() -> (any ClockTimer)? {
        isDone = true
        return timer.take()
    }
}
