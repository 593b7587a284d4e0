import FutureLibConcurrencyHelpers

// `interval`: a stream made by a clock.

extension FutureStream where Value == Int {
    /// A stream of 0, 1, 2, … , one every `period` on `clock`, that never finishes by itself.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let stop = CancellationRequest()
    /// let ticks = FutureStream<Int>.interval(.seconds(1), clock: clock, cancellationToken: stop.token)
    /// ticks.onSuccess(on: .synchronous) { tick in print(tick) }
    /// clock.advance(by: .seconds(3))  // prints 0, 1, 2
    /// stop.cancel()                    // the timer stops; the stream gets CancellationError and ends
    /// ```
    ///
    /// ```
    /// time:    0  1  2  3  4      (period 1)
    /// output:     0  1  2  3  …
    /// ```
    ///
    /// ### Semantics (RxSwift's `interval`; swift-async-algorithms' `AsyncTimerSequence`)
    /// - The first tick comes `period` after the call, each next one `period` after the previous
    ///   one fired; they are published from the timer (on `clock`'s thread). The stream keeps the
    ///   latest tick (`capacity` 1).
    /// - It ends only with `cancellationToken` (one `CancellationError`, then the end), or when
    ///   nothing holds it or subscribes to it any more; either way its timer is stopped.
    /// - A clock's time stops at `.seconds(Int64.max)` (``ManualClock``): the tick due then, or
    ///   beyond, comes once, and no tick follows it.
    ///
    /// - Parameters:
    ///   - period: The time between ticks; less than a millisecond counts as a millisecond.
    ///   - clock: The clock that ticks. Defaults to the system clock.
    ///   - cancellationToken: Stops the ticks and finishes the stream.
    /// - Returns: A stream of the tick counts, from 0.
    public static func interval(
        _ period: Duration,
        clock: some TimerClock = .system,
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<Int> {
        let period = max(period, .milliseconds(1))
        let ticks = FutureStream<Int>.makeStage(capacity: 1, cancellationToken: cancellationToken)
        if ticks.isFinished { return ticks }
        let ticker = Ticker()
        let timer = clock.makeTimer(after: period) { [weak ticks] in
            guard let ticks, let (tick, timer) = ticker.next() else { return }
            ticks.publish(.success(tick))
            // At the end of the clock's time the next tick would be due at once, for ever: none comes.
            if clock.now < Duration.endOfTime { timer?.reschedule(after: period) }
        }
        if !ticker.keep(timer) { timer.cancel() }
        ticks.onEnd { ticker.stop()?.cancel() }
        return ticks
    }
}

/// `interval`'s count and timer.
final class Ticker: Sendable {
    private let state = Lock((count: 0, timer: (any ClockTimer)?.none, isStopped: false))

    init() {}

    /// The next tick and the timer to re-arm; nil once stopped.
    func next() -> (Int, (any ClockTimer)?)? {
        state.withLock { state in
            guard !state.isStopped else { return nil }
            defer { state.count += 1 }
            return (state.count, state.timer)
        }
    }

    func keep(_ timer: any ClockTimer) -> Bool {
        state.withLock { state in
            guard !state.isStopped else { return false }
            state.timer = timer
            return true
        }
    }

    func stop() -> (any ClockTimer)? {
        state.withLock { state in
            state.isStopped = true
            return state.timer.take()
        }
    }
}
