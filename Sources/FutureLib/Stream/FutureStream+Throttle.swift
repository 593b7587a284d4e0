// `throttle`: at most one value per interval.

extension FutureStream {
    /// Publishes at most one value per `interval` on `clock`: the first value at once, then,
    /// of the values that arrive within an interval of the last one published, the latest (or
    /// the first, with `latest: false`).
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let positions = StreamPromise<Int>()
    /// let throttled = positions.stream.throttle(for: .seconds(1), clock: clock)
    /// ```
    ///
    /// ```
    /// time:    0   1   2   3   4   5      (interval 2, latest: true)
    /// source:  a   b   c       d   |
    /// output:  a       c       d   |
    /// ```
    ///
    /// ### Semantics (swift-async-algorithms' `throttle(for:clock:latest:)`, value for value)
    /// - A value that arrives `interval` or more after the last published one (or the first
    ///   value) is published at once, combined with the values held since: itself with
    ///   `latest: true`, the first one held with `latest: false`.
    /// - A value that arrives sooner is held (the latest, or the first); it is published with the
    ///   next value that comes after the interval, or when this stream finishes: then at once if
    ///   the interval has passed, else when it passes, and then the end. So, as in
    ///   swift-async-algorithms, a held value waits for the next value or the end, not for a
    ///   timer (RxSwift's `throttle` publishes it when the interval ends).
    /// - Errors pass through at once. (swift-async-algorithms ends at the first error.)
    /// - `cancellationToken` cancelled, or the new stream ending or released: its timer is stopped.
    ///
    /// - Parameters:
    ///   - interval: The shortest time between two published values. Negative counts as zero.
    ///   - clock: The clock that times it. Defaults to the system clock.
    ///   - latest: Whether a held value is the latest (true) or the first (false) of its interval.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of at most one value per `interval`.
    @inlinable
    public func throttle(
        for interval: Duration,
        clock: some TimerClock = .system,
        latest: Bool = true,
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<Value> {
        let machine = StageMachine<ThrottleState<Value>, Value>(ThrottleState(latest: latest))
        let throttled: FutureStream<Value> = derive(
            on: .synchronous,
            cancellationToken: cancellationToken,
            { result, throttled in
                let value: Value
                switch result {
                case .success(let success): value = success
                case .failure(let error):
                    machine.handle(throttled) { state, outbox in state.pass(error, into: &outbox) }
                    return
                }
                switch machine.handle(throttled, { state, outbox in state.receive(value, into: &outbox) }) {
                case .none:
                    break
                case .restart(let timer):
                    timer.reschedule(after: interval)
                case .start:
                    let timer = clock.makeTimer(after: interval) { [weak throttled] in
                        machine.handle(throttled) { state, outbox in state.intervalPassed(into: &outbox) }
                    }
                    if !machine.handle(throttled, { state, _ in state.keep(timer) }) { timer.cancel() }
                }
            },
            finished: { throttled in
                machine.finish(throttled) { state, outbox in state.finish(into: &outbox) }
            }
        )
        throttled.onEnd { machine.handle(nil) { state, _ in state.end() }?.cancel() }
        return throttled
    }
}

/// `throttle`'s state: whether an interval has passed since the last published value, the value
/// held meanwhile, and the one timer that measures the intervals.
@usableFromInline
struct ThrottleState<Value: Sendable>: Sendable {
    /// What to do with the timer after a value was published.
    @usableFromInline
    enum Interval: Sendable {
        case none
        case start
        case restart(any ClockTimer)
    }

    @usableFromInline let latest: Bool
    @usableFromInline var isIntervalOver = true
    @usableFromInline var held: Value?
    @usableFromInline var timer: (any ClockTimer)?
    @usableFromInline var isSourceFinished = false
    @usableFromInline var isDone = false

    @inlinable
    init(latest: Bool) {
        self.latest = latest
    }

    @inlinable
    mutating func pass(_ error: any Error, into outbox: inout [StageOutput<Value>]) {
        if !isDone { outbox.append(.result(.failure(error))) }
    }

    @inlinable
    mutating func receive(_ value: Value, into outbox: inout [StageOutput<Value>]) -> Interval {
        guard !isDone else { return .none }
        let reduced = latest ? value : (held ?? value)
        guard isIntervalOver else {
            held = reduced
            return .none
        }
        held = nil
        isIntervalOver = false
        outbox.append(.result(.success(reduced)))
        return timer.map { .restart($0) } ?? .start
    }

    /// Keeps the interval timer; false when it is not needed any more (stop it).
    @inlinable
    mutating func keep(_ timer: any ClockTimer) -> Bool {
        guard !isDone else { return false }
        self.timer = timer
        return true
    }

    @inlinable
    mutating func intervalPassed(into outbox: inout [StageOutput<Value>]) {
        guard !isDone else { return }
        isIntervalOver = true
        guard isSourceFinished else { return }
        isDone = true
        if let value = held.take() { outbox.append(.result(.success(value))) }
        outbox.append(.finish)
        timer = nil
    }

    /// The source finished: the held value and the end, now or once the interval is over.
    /// Returns the timer to stop when it is not needed.
    @inlinable
    mutating func finish(into outbox: inout [StageOutput<Value>]) -> (any ClockTimer)? {
        guard !isDone else { return nil }
        isSourceFinished = true
        guard held == nil || isIntervalOver else { return nil }
        isDone = true
        if let value = held.take() { outbox.append(.result(.success(value))) }
        outbox.append(.finish)
        return timer.take()
    }

    @inlinable
    mutating func end() -> (any ClockTimer)? {
        isDone = true
        held = nil
        return timer.take()
    }
}
