// `debounce`: a value is published once `interval` passed without a newer one.

extension FutureStream {
    /// Publishes a value only once `interval` has passed on `clock` without a newer value.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let keystrokes = StreamPromise<String>()
    /// let queries = keystrokes.stream.debounce(for: .milliseconds(300), clock: clock)
    /// keystrokes.fulfill("s")
    /// keystrokes.fulfill("sw")
    /// clock.advance(by: .milliseconds(300))  // publishes "sw"
    /// ```
    ///
    /// ```
    /// time:    0   1   2   3   4   5   6   7      (interval 2)
    /// source:  a   b           c       |
    /// output:              b           c|
    /// ```
    ///
    /// ### Semantics (swift-async-algorithms' `debounce(for:clock:)`)
    /// - Each value restarts the wait: its deadline is `clock.now` plus `interval`. The value still
    ///   waiting at its deadline is published, from the timer (on `clock`'s thread:
    ///   `ManualClock.advance(by:)`'s caller).
    /// - When this stream finishes, the value still waiting is published at once, then the end.
    /// - Errors pass through at once and leave the waiting value waiting. (swift-async-algorithms
    ///   ends at the first error, dropping the waiting value.)
    /// - `cancellationToken` cancelled, or the new stream ending or released: its timer is
    ///   stopped and the waiting value released (`ManualClock.pendingTimerCount` is back where it was).
    ///
    /// ### Cost
    /// One timer at most per stage, made for its first value and set again for later ones. A value
    /// that arrives while the timer is set only moves the deadline (a read of ``TimerClock/now``);
    /// the timer, when it fires before that deadline, is set again for the rest, as
    /// swift-async-algorithms' sleeping task is. So a clock of your own must give its own `now`,
    /// on the time its timers use, unless its timers run in real time (the default `now` is the
    /// system clock's).
    ///
    /// - Parameters:
    ///   - interval: How long a value must stay the latest to be published. Negative counts as zero.
    ///   - clock: The clock that times it. Defaults to the system clock.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of the values that stayed the latest for `interval`.
    @inlinable
    public func debounce(
        for interval: Duration,
        clock: some TimerClock = .system,
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<Value> {
        let interval = max(interval, .zero)
        let machine = StageMachine<DebounceState<Value>, Value>(DebounceState(interval: interval))
        // Carries out what an event decided about the timer, outside the machine's lock.
        @Sendable func perform(_ action: DebounceState<Value>.TimerAction, for debounced: FutureStream<Value>) {
            switch action {
            case .none:
                return
            case .set(let timer, let delay):
                timer.reschedule(after: delay)
            case .stop(let timer):
                timer.cancel()
            case .make:
                let timer = clock.makeTimer(after: interval) { [weak debounced] in
                    let now = clock.now
                    let action = machine.handle(debounced) { state, outbox in state.fire(at: now, into: &outbox) }
                    if let debounced { perform(action, for: debounced) }
                }
                let now = clock.now
                perform(machine.handle(nil) { state, _ in state.made(timer, at: now) }, for: debounced)
            }
        }
        let debounced: FutureStream<Value> = derive(
            on: .synchronous,
            cancellationToken: cancellationToken,
            { result, debounced in
                let value: Value
                switch result {
                case .success(let success): value = success
                case .failure(let error):
                    machine.handle(debounced) { state, outbox in state.pass(error, into: &outbox) }
                    return
                }
                let deadline = clock.now + interval
                perform(machine.handle(debounced) { state, _ in state.hold(value, until: deadline) }, for: debounced)
            },
            finished: { debounced in
                machine.finish(debounced) { state, outbox in state.finish(into: &outbox) }
            }
        )
        debounced.onEnd { machine.handle(nil) { state, _ in state.end() }?.cancel() }
        return debounced
    }
}

/// `debounce`'s state: the value waiting and its deadline, and the one timer that waits for it.
///
/// The timer is made once, for the first value, outside the lock; while it is set, a newer value
/// only moves the deadline, and the timer, firing before the deadline, is set again for the rest
/// (swift-async-algorithms' debounce moves its deadline the same way). `isMakingTimer` covers the
/// moment between deciding to make the timer and keeping it: a timer may fire before it is kept.
@usableFromInline
struct DebounceState<Value: Sendable>: Sendable {
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

    @usableFromInline let interval: Duration
    @usableFromInline var waiting: Value?
    /// When the waiting value is due, on the clock's ``TimerClock/now``.
    @usableFromInline var deadline = Duration.zero
    /// The timer, once made; set again for each wait.
    @usableFromInline var timer: (any ClockTimer)?
    /// Whether the timer is set (or being made for) the waiting value.
    @usableFromInline var isTimerSet = false
    /// Whether a newer value moved the deadline since the timer was set.
    @usableFromInline var isDeadlineMoved = false
    /// Whether a thread is making the timer, outside the lock.
    @usableFromInline var isMakingTimer = false
    /// Whether the timer, once made, must be set for `deadline` (it fired, or was needed again,
    /// before it was kept).
    @usableFromInline var setsTimerWhenMade = false
    @usableFromInline var isDone = false

    @inlinable
    init(interval: Duration) {
        self.interval = interval
    }

    @inlinable
    mutating func pass(_ error: any Error, into outbox: inout [StageOutput<Value>]) {
        if !isDone { outbox.append(.result(.failure(error))) }
    }

    /// `value` waits now, until `deadline`.
    @inlinable
    mutating func hold(_ value: Value, until deadline: Duration) -> TimerAction {
        guard !isDone else { return .none }
        waiting = value
        self.deadline = deadline
        if isTimerSet {
            isDeadlineMoved = true
            return .none
        }
        isTimerSet = true
        isDeadlineMoved = false
        if let timer { return .set(timer, after: interval) }
        if isMakingTimer {
            setsTimerWhenMade = true
            return .none
        }
        isMakingTimer = true
        return .make
    }

    /// The timer decided on by ``hold(_:until:)`` is made (its first wait set), `now` read after.
    @inlinable
    mutating func made(_ timer: any ClockTimer, at now: Duration) -> TimerAction {
        isMakingTimer = false
        guard !isDone else { return .stop(timer) }
        self.timer = timer
        guard setsTimerWhenMade else { return .none }
        setsTimerWhenMade = false
        isDeadlineMoved = false
        return .set(timer, after: deadline - now)
    }

    /// The timer fired, the clock at `now`: publishes the waiting value if it is due, else sets
    /// the timer again for the rest of its wait.
    @inlinable
    mutating func fire(at now: Duration, into outbox: inout [StageOutput<Value>]) -> TimerAction {
        guard !isDone, isTimerSet else { return .none }
        if isDeadlineMoved, now < deadline {
            isDeadlineMoved = false
            if let timer { return .set(timer, after: deadline - now) }
            setsTimerWhenMade = true  // fired before it was kept: its maker sets it
            return .none
        }
        isTimerSet = false
        isDeadlineMoved = false
        if let value = waiting.take() { outbox.append(.result(.success(value))) }
        return .none
    }

    /// The source finished: the waiting value, then the end. Returns the timer to stop.
    @inlinable
    mutating func finish(into outbox: inout [StageOutput<Value>]) -> (any ClockTimer)? {
        guard !isDone else { return nil }
        isDone = true
        if let value = waiting.take() { outbox.append(.result(.success(value))) }
        outbox.append(.finish)
        return timer.take()
    }

    /// The new stream ended: returns the timer to stop.
    @inlinable
    mutating func end() -> (any ClockTimer)? {
        isDone = true
        waiting = nil
        return timer.take()
    }
}
