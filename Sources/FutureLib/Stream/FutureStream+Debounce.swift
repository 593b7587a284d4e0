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
    /// - Each value restarts the wait; the value still waiting when `interval` has passed is
    ///   published, from the timer (on `clock`'s thread: `ManualClock.advance(by:)`'s caller).
    /// - When this stream finishes, the value still waiting is published at once, then the end.
    /// - Errors pass through at once and leave the waiting value waiting. (swift-async-algorithms
    ///   ends at the first error, dropping the waiting value.)
    /// - `cancellationToken` cancelled, or the new stream ending or released: its timer is
    ///   stopped and the waiting value released (`ManualClock.pendingTimerCount` is back where it was).
    ///
    /// - Parameters:
    ///   - interval: How long a value must stay the latest to be published. Negative counts as zero.
    ///   - clock: The clock that times it. Defaults to the system clock.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of the values that stayed the latest for `interval`.
    public func debounce(
        for interval: Duration,
        clock: some TimerClock = .system,
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<Value> {
        let machine = StageMachine<DebounceState<Value>, Value>(DebounceState())
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
                let (generation, previous) = machine.handle(debounced) { state, _ in state.hold(value) }
                previous?.cancel()
                guard let generation else { return }
                let timer = clock.makeTimer(after: interval) { [weak debounced] in
                    machine.handle(debounced) { state, outbox in state.fire(generation, into: &outbox) }
                }
                if !machine.handle(debounced, { state, _ in state.arm(timer, for: generation) }) { timer.cancel() }
            },
            finished: { debounced in
                machine.finish(debounced) { state, outbox in state.finish(into: &outbox) }
            }
        )
        debounced.onEnd { machine.handle(nil) { state, _ in state.end() }?.cancel() }
        return debounced
    }
}

/// `debounce`'s state: the value waiting, its timer, and its generation (a timer that fires for
/// an older value does nothing).
struct DebounceState<Value: Sendable>: Sendable {
    private var waiting: Value?
    private var generation = 0
    private var timer: (any ClockTimer)?
    private var isDone = false

    init() {}

    mutating func pass(_ error: any Error, into outbox: inout [StageOutput<Value>]) {
        if !isDone { outbox.append(.result(.failure(error))) }
    }

    /// `value` waits now; returns its generation (nil once done) and the timer to stop.
    mutating func hold(_ value: Value) -> (generation: Int?, previous: (any ClockTimer)?) {
        guard !isDone else { return (nil, nil) }
        generation += 1
        waiting = value
        return (generation, timer.take())
    }

    /// Keeps the timer of `generation`; false when it is not needed any more (stop it).
    mutating func arm(_ timer: any ClockTimer, for generation: Int) -> Bool {
        guard !isDone, generation == self.generation, waiting != nil else { return false }
        self.timer = timer
        return true
    }

    mutating func fire(_ generation: Int, into outbox: inout [StageOutput<Value>]) {
        guard !isDone, generation == self.generation, let value = waiting.take() else { return }
        timer = nil
        outbox.append(.result(.success(value)))
    }

    /// The source finished: the waiting value, then the end. Returns the timer to stop.
    mutating func finish(into outbox: inout [StageOutput<Value>]) -> (any ClockTimer)? {
        guard !isDone else { return nil }
        isDone = true
        if let value = waiting.take() { outbox.append(.result(.success(value))) }
        outbox.append(.finish)
        return timer.take()
    }

    /// The new stream ended: returns the timer to stop.
    mutating func end() -> (any ClockTimer)? {
        isDone = true
        waiting = nil
        return timer.take()
    }
}
