// `chunks`: values gathered into arrays, by count, by time, or by whichever comes first.

extension FutureStream {
    /// Gathers the values into arrays of `count`; the last one may be shorter.
    ///
    /// ```swift
    /// let samples = StreamPromise<Int>()
    /// let batches: FutureStream<[Int]> = samples.stream.chunks(ofCount: 100)
    /// ```
    ///
    /// ```
    /// source:  1  2  3  ✕  4  5  |
    /// output:     [1,2] ✕ [3,4] [5]|    (ofCount: 2)
    /// ```
    ///
    /// ### Semantics (swift-async-algorithms' `chunks(ofCount:)`)
    /// - An array is published as soon as it has `count` values; when this stream finishes, the
    ///   values gathered so far (if any) are published, then the end.
    /// - Errors pass through at once and do not break the array being gathered.
    ///   (swift-async-algorithms ends at the first error, dropping that array.)
    ///
    /// - Parameters:
    ///   - count: How many values an array holds; must be positive.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of arrays of `count` values (the last one shorter).
    @inlinable
    public func chunks(ofCount count: Int, cancellationToken: CancellationToken = .none) -> FutureStream<[Value]> {
        precondition(count > 0, "count must be positive")
        let chunk = StageBox<[Value]>([])
        return derive(
            on: .synchronous,
            cancellationToken: cancellationToken,
            { result, chunks in
                switch result {
                case .success(let value):
                    chunk.value.append(value)
                    guard chunk.value.count == count else { return }
                    let full = chunk.value
                    chunk.value = []
                    chunks.publish(.success(full))
                case .failure(let error):
                    chunks.publish(.failure(error))
                }
            },
            finished: { chunks in
                if !chunk.value.isEmpty { chunks.publish(.success(chunk.value)) }
                chunk.value = []
                chunks.finish()
            }
        )
    }

    /// Gathers the values that arrive in each `interval` on `clock` into an array.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let clicks = StreamPromise<Int>()
    /// let perSecond: FutureStream<[Int]> = clicks.stream.chunks(every: .seconds(1), clock: clock)
    /// ```
    ///
    /// ```
    /// time:    0  1  2  3  4  5  6      (every 2)
    /// source:  1  2     3        |
    /// output:        [1,2]  [3]  |
    /// ```
    ///
    /// ### Semantics (swift-async-algorithms' `chunked(by: .repeating(every:))`)
    /// - A timer ticks every `interval` from the moment this is called; at each tick the values
    ///   gathered since the last one are published, unless there are none.
    /// - When this stream finishes, the values gathered so far (if any) are published, then the end.
    /// - Errors pass through at once. The timer stops when the new stream ends or is released.
    /// - A clock's time stops at `.seconds(Int64.max)` (``ManualClock``): the tick due then, or
    ///   beyond, comes once, and no tick follows it; the values gathered after it are published
    ///   at the end.
    ///
    /// - Parameters:
    ///   - interval: How often to publish; less than a millisecond counts as a millisecond.
    ///   - clock: The clock that ticks. Defaults to the system clock.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of the values of each interval.
    @inlinable
    public func chunks(
        every interval: Duration,
        clock: some TimerClock = .system,
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<[Value]> {
        timedChunks(ofCount: nil, every: interval, clock: clock, cancellationToken: cancellationToken)
    }

    /// Gathers the values into arrays of `count`, or of what arrived in each `interval` on
    /// `clock`, whichever is full first.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let events = StreamPromise<String>()
    /// let batches: FutureStream<[String]> = events.stream.chunks(ofCount: 50, or: .seconds(1), clock: clock)
    /// ```
    ///
    /// ```
    /// time:    0  1  2  3  4  5      (ofCount: 2, or every 3)
    /// source:  1  2  3        |
    /// output:     [1,2] [3]   |
    /// ```
    ///
    /// ### Semantics (swift-async-algorithms' `chunks(ofCount:or: .repeating(every:))`)
    /// As `chunks(every:clock:cancellationToken:)`, and an array is also published as soon as it
    /// has `count` values (the timer keeps its own rhythm).
    ///
    /// - Parameters:
    ///   - count: The most values an array holds; must be positive.
    ///   - interval: How often to publish what was gathered; less than a millisecond counts as a millisecond.
    ///   - clock: The clock that ticks. Defaults to the system clock.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of arrays of at most `count` values.
    @inlinable
    public func chunks(
        ofCount count: Int,
        or interval: Duration,
        clock: some TimerClock = .system,
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<[Value]> {
        precondition(count > 0, "count must be positive")
        return timedChunks(ofCount: count, every: interval, clock: clock, cancellationToken: cancellationToken)
    }

    /// Both timed forms: a chunk per tick of one timer, or sooner when `count` values fill it.
    @inlinable
    func timedChunks(
        ofCount count: Int?,
        every interval: Duration,
        clock: some TimerClock,
        cancellationToken: CancellationToken
    ) -> FutureStream<[Value]> {
        let interval = max(interval, .milliseconds(1))
        let machine = StageMachine<ChunksState<Value>, [Value]>(ChunksState(count: count))
        let chunks: FutureStream<[Value]> = derive(
            on: .synchronous,
            cancellationToken: cancellationToken,
            { result, chunks in
                machine.handle(chunks) { state, outbox in state.receive(result, into: &outbox) }
            },
            finished: { chunks in
                machine.finish(chunks) { state, outbox in state.finish(into: &outbox) }
            }
        )
        if chunks.isFinished { return chunks }
        let timer = clock.makeTimer(after: interval) { [weak chunks] in
            let timer = machine.handle(chunks) { state, outbox in state.tick(into: &outbox) }
            // At the end of the clock's time the next tick would be due at once, for ever: none comes.
            if hasTimeLeft(clock.now) { timer?.reschedule(after: interval) }
        }
        if !machine.handle(nil, { state, _ in state.keep(timer) }) { timer.cancel() }
        chunks.onEnd { machine.handle(nil) { state, _ in state.end() }?.cancel() }
        return chunks
    }
}

/// The state of the timed `chunks`: the values gathered, and the ticking timer.
@usableFromInline
struct ChunksState<Value: Sendable>: Sendable {
    @usableFromInline let count: Int?
    @usableFromInline var chunk: [Value] = []
    @usableFromInline var timer: (any ClockTimer)?
    @usableFromInline var isDone = false

    @inlinable
    init(count: Int?) {
        self.count = count
    }

    @inlinable
    mutating func receive(_ result: Result<Value, any Error>, into outbox: inout [StageOutput<[Value]>]) {
        guard !isDone else { return }
        switch result {
        case .success(let value):
            chunk.append(value)
            if let count, chunk.count == count { outbox.append(.result(.success(chunk.take()))) }
        case .failure(let error):
            outbox.append(.result(.failure(error)))
        }
    }

    /// A tick: publishes what was gathered; returns the timer to re-arm (nil once done).
    @inlinable
    mutating func tick(into outbox: inout [StageOutput<[Value]>]) -> (any ClockTimer)? {
        guard !isDone else { return nil }
        if !chunk.isEmpty { outbox.append(.result(.success(chunk.take()))) }
        return timer
    }

    @inlinable
    mutating func keep(_ timer: any ClockTimer) -> Bool {
        guard !isDone else { return false }
        self.timer = timer
        return true
    }

    @inlinable
    mutating func finish(into outbox: inout [StageOutput<[Value]>]) -> (any ClockTimer)? {
        guard !isDone else { return nil }
        isDone = true
        if !chunk.isEmpty { outbox.append(.result(.success(chunk.take()))) }
        outbox.append(.finish)
        return timer.take()
    }

    @inlinable
    mutating func end() -> (any ClockTimer)? {
        isDone = true
        chunk = []
        return timer.take()
    }
}

extension Array {
    /// The array's elements; the array is left empty.
    @inlinable
    mutating func take() -> [Element] {
        defer { self = [] }
        return self
    }
}
