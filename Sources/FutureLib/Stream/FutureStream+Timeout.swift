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
    /// - Parameters:
    ///   - interval: The longest wait for a result. Negative counts as zero.
    ///   - clock: The clock that times it. Defaults to the system clock.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of this stream's results, ended by a timeout.
    public func timeout(
        after interval: Duration,
        clock: some TimerClock = .system,
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<Value> {
        let machine = StageMachine<TimeoutState<Value>, Value>(TimeoutState())
        @Sendable func arm(_ watched: FutureStream<Value>?, previous: (any ClockTimer)?, generation: Int?) {
            previous?.cancel()
            guard let generation else { return }
            let timer = clock.makeTimer(after: interval) { [weak watched] in
                machine.handle(watched) { state, outbox in state.fire(generation, into: &outbox) }
            }
            if !machine.handle(nil, { state, _ in state.keep(timer, for: generation) }) { timer.cancel() }
        }
        let watched: FutureStream<Value> = derive(
            on: .synchronous,
            cancellationToken: cancellationToken,
            { result, watched in
                let (previous, generation) = machine.handle(watched) { state, outbox in
                    state.receive(result, into: &outbox)
                }
                arm(watched, previous: previous, generation: generation)
            },
            finished: { watched in
                machine.finish(watched) { state, outbox in state.finish(into: &outbox) }
            }
        )
        if watched.isFinished { return watched }
        arm(watched, previous: nil, generation: machine.handle(nil) { state, _ in state.start() })
        watched.onEnd { machine.handle(nil) { state, _ in state.end() }?.cancel() }
        return watched
    }
}

/// `timeout`'s state: the timer of the current wait and its generation (an older timer that
/// fires does nothing).
struct TimeoutState<Value: Sendable>: Sendable {
    private var generation = 0
    private var timer: (any ClockTimer)?
    private var isDone = false

    init() {}

    /// The first wait's generation; nil when a kept result started it already.
    mutating func start() -> Int? {
        guard !isDone, generation == 0 else { return nil }
        generation += 1
        return generation
    }

    /// Passes `result` on; returns the timer to stop and the next wait's generation.
    mutating func receive(
        _ result: Result<Value, any Error>,
        into outbox: inout [StageOutput<Value>]
    ) -> (previous: (any ClockTimer)?, generation: Int?) {
        guard !isDone else { return (nil, nil) }
        outbox.append(.result(result))
        generation += 1
        return (timer.take(), generation)
    }

    mutating func keep(_ timer: any ClockTimer, for generation: Int) -> Bool {
        guard !isDone, generation == self.generation else { return false }
        self.timer = timer
        return true
    }

    mutating func fire(_ generation: Int, into outbox: inout [StageOutput<Value>]) {
        guard !isDone, generation == self.generation else { return }
        isDone = true
        timer = nil
        outbox.append(.result(.failure(FutureError.timeout)))
        outbox.append(.finish)
    }

    mutating func finish(into outbox: inout [StageOutput<Value>]) -> (any ClockTimer)? {
        guard !isDone else { return nil }
        isDone = true
        outbox.append(.finish)
        return timer.take()
    }

    mutating func end() -> (any ClockTimer)? {
        isDone = true
        return timer.take()
    }
}
