import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// debounce, throttle, chunks (count, time, count or time), timeout, interval, buffer: each
/// driven by a `ManualClock` (or a context that runs its jobs when told), so every run sees the
/// same schedule; and each stops its timer when its token is cancelled or it is released.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamTimeTests {
    typealias Play = FutureStreamShapingTests

    // MARK: - debounce

    @Test func `debounce publishes the value that stayed the latest for the interval, and the waiting one at the end`()
    {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        let tape = Tape(source.stream.debounce(for: .seconds(2), clock: clock))
        source.fulfill(1)
        clock.advance(by: .seconds(1))
        source.fulfill(2)  // restarts the wait: 1 is never published
        clock.advance(by: .seconds(1))
        #expect(tape.text == "")
        clock.advance(by: .seconds(1))
        #expect(tape.text == "2")
        source.fulfill(3)
        source.reject(TestFailure(code: 5))  // at once; 3 goes on waiting
        #expect(tape.text == "2 ✕5")
        source.finish()  // the waiting value at once, then the end
        #expect(tape.text == "2 ✕5 3 |")
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `debounce holds one timer: values within the interval move its deadline, and it waits out the rest`() {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        let tape = Tape(source.stream.debounce(for: .seconds(2), clock: clock))
        for value in 1...100 { source.fulfill(value) }
        #expect(clock.pendingTimerCount == 1)  // one timer, whatever the number of values
        clock.advance(by: .seconds(1))
        source.fulfill(101)  // t = 1: due at 3
        clock.advance(by: .seconds(1))  // t = 2: the timer fires before the deadline and waits again
        #expect(tape.text == "")
        #expect(clock.pendingTimerCount == 1)
        clock.advance(by: .seconds(1))  // t = 3
        #expect(tape.text == "101")
        #expect(clock.pendingTimerCount == 0)
        source.fulfill(102)  // the same timer, set again
        #expect(clock.pendingTimerCount == 1)
        clock.advance(by: .seconds(2))
        #expect(tape.text == "101 102")
        source.finish()
        #expect(tape.text == "101 102 |")
        #expect(clock.pendingTimerCount == 0)
    }

    // MARK: - throttle

    @Test
    func `throttle publishes the first value at once and the latest held one with the next value after the interval`() {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        let tape = Tape(source.stream.throttle(for: .seconds(2), clock: clock))
        source.fulfill(1)  // t = 0: at once
        clock.advance(by: .seconds(1))
        source.fulfill(2)  // t = 1: held
        clock.advance(by: .seconds(1))
        #expect(tape.text == "1")  // the interval is over, but a held value waits for the next one
        source.fulfill(3)  // t = 2: published, the latest (2 is dropped)
        clock.advance(by: .seconds(1))
        source.fulfill(4)  // t = 3: held
        source.finish()  // the interval ends at t = 4: 4 and the end then
        #expect(tape.text == "1 3")
        clock.advance(by: .seconds(1))
        #expect(tape.text == "1 3 4 |")
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `throttle with latest false publishes the first value held in the interval`() {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        let tape = Tape(source.stream.throttle(for: .seconds(2), clock: clock, latest: false))
        source.fulfill(1)
        clock.advance(by: .seconds(1))
        source.fulfill(2)
        source.fulfill(3)
        clock.advance(by: .seconds(1))
        source.fulfill(4)  // publishes the first held, 2, in its place (as swift-async-algorithms)
        source.finish()  // nothing held: the end at once
        #expect(tape.text == "1 2 |")
        #expect(clock.pendingTimerCount == 0)
    }

    // MARK: - chunks

    @Test func `chunks of count publishes full arrays at once and the short last one at the end`() {
        let text = Play.tape("1 2 3 ✕4 4 5 |") { $0.chunks(ofCount: 2) }
        #expect(text == "[1, 2] ✕4 [3, 4] [5] |")
    }

    @Test func `chunks every interval publishes what arrived in it, nothing for an empty one, and the rest at the end`()
    {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        let tape = Tape(source.stream.chunks(every: .seconds(2), clock: clock))
        source.fulfill(1)
        source.fulfill(2)
        clock.advance(by: .seconds(2))
        clock.advance(by: .seconds(2))  // nothing arrived: nothing published
        source.fulfill(3)
        source.finish()
        #expect(tape.text == "[1, 2] [3] |")
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `chunks of count or interval publishes whichever is full first`() {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        let tape = Tape(source.stream.chunks(ofCount: 2, or: .seconds(3), clock: clock))
        source.fulfill(1)
        source.fulfill(2)  // full: at once
        source.fulfill(3)
        clock.advance(by: .seconds(3))  // the tick: [3]
        #expect(tape.text == "[1, 2] [3]")
        source.finish()
        #expect(tape.text == "[1, 2] [3] |")
        #expect(clock.pendingTimerCount == 0)
    }

    // MARK: - timeout

    @Test func `timeout fails with FutureError timeout and ends when no result arrives in time, and leaves its source`()
    {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        let tape = Tape(source.stream.timeout(after: .seconds(2), clock: clock))
        clock.advance(by: .seconds(1))
        source.fulfill(1)
        clock.advance(by: .seconds(1))
        source.reject(TestFailure(code: 3))  // a result too: restarts the wait
        clock.advance(by: .seconds(1))
        #expect(tape.text == "1 ✕3")
        clock.advance(by: .seconds(1))
        #expect(tape.text == "1 ✕3 ✕t |")
        #expect(source.stream.subscriberCount == 0)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `timeout ends with its source and stops its timer`() {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        let tape = Tape(source.stream.timeout(after: .seconds(2), clock: clock))
        source.fulfill(1)
        source.finish()
        #expect(tape.text == "1 |")
        #expect(clock.pendingTimerCount == 0)
    }

    // MARK: - interval

    @Test func `interval ticks 0, 1, 2 on its clock and its token stops the timer`() {
        let clock = ManualClock()
        let stop = CancellationRequest()
        let ticks = FutureStream<Int>.interval(.seconds(1), clock: clock, cancellationToken: stop.token)
        let tape = Tape(ticks)
        clock.advance(by: .milliseconds(999))
        #expect(tape.text == "")
        clock.advance(by: .milliseconds(2001))
        #expect(tape.text == "0 1 2")
        stop.cancel()
        #expect(tape.text == "0 1 2 ✕c |")
        #expect(clock.pendingTimerCount == 0)
        #expect(FutureStream<Int>.interval(.zero, clock: clock, cancellationToken: .cancelled).isFinished)
        #expect(clock.pendingTimerCount == 0)
    }

    // MARK: - buffer

    @Test(arguments: [true, false])
    func `buffer keeps what its policy allows for a consumer that is behind, then hands on the end`(newest: Bool) {
        let context = ManualContext()
        let source = StreamPromise<Int>(capacity: 0)
        let policy: FutureStream<Int>.BufferingPolicy = newest ? .bufferingNewest(2) : .bufferingOldest(2)
        let tape = Tape(source.stream.buffer(policy, on: context))
        for value in 1...5 { source.fulfill(value) }
        #expect(tape.text == "")  // the consumer's context has not run yet
        context.runAll()
        #expect(tape.text == (newest ? "4 5" : "1 2"))
        source.reject(TestFailure(code: 6))
        source.finish()
        context.runAll()
        #expect(tape.text == (newest ? "4 5 ✕6 |" : "1 2 ✕6 |"))
    }

    @Test func `buffer unbounded drops nothing and keeps the order`() {
        let context = ManualContext()
        let source = StreamPromise<Int>(capacity: 0)
        let tape = Tape(source.stream.buffer(.unbounded, on: context))
        for value in 1...100 { source.fulfill(value) }
        source.finish()
        context.runAll()
        #expect(tape.text == (1...100).map(String.init).joined(separator: " ") + " |")
    }

    @Test func `buffer of a limit of zero or less keeps one result`() {
        for limit in [0, -1, Int.min] {
            for newest in [true, false] {
                let context = ManualContext()
                let source = StreamPromise<Int>(capacity: 0)
                let policy: FutureStream<Int>.BufferingPolicy =
                    newest ? .bufferingNewest(limit) : .bufferingOldest(limit)
                let tape = Tape(source.stream.buffer(policy, on: context))
                for value in 1...3 { source.fulfill(value) }
                source.finish()
                context.runAll()
                #expect(tape.text == (newest ? "3 |" : "1 |"), "limit \(limit)")
            }
        }
    }

    @Test func `timeout holds one timer: each result moves its deadline, and it waits out the rest`() {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        let tape = Tape(source.stream.timeout(after: .seconds(2), clock: clock))
        #expect(clock.pendingTimerCount == 1)
        clock.advance(by: .seconds(1))
        for value in 1...100 { source.fulfill(value) }  // t = 1: the wait runs until 3
        #expect(clock.pendingTimerCount == 1)
        clock.advance(by: .seconds(1))  // t = 2: the timer fires before the deadline and waits again
        #expect(!tape.text.contains("✕"))
        #expect(clock.pendingTimerCount == 1)
        clock.advance(by: .seconds(1))  // t = 3
        #expect(tape.text.hasSuffix("100 ✕t |"))
        #expect(clock.pendingTimerCount == 0)
        #expect(source.stream.subscriberCount == 0)
    }

    // MARK: - Durations of zero or less

    @Test func `debounce, throttle and timeout take a duration of zero or less as zero: due at the next advance`() {
        let lengths: [Duration] = [
            .zero, .seconds(-1), .seconds(Int64.min), .init(secondsComponent: 0, attosecondsComponent: -1),
        ]
        for interval in lengths {
            let clock = ManualClock()
            let source = StreamPromise<Int>(capacity: 0)
            let debounced = Tape(source.stream.debounce(for: interval, clock: clock))
            let throttled = Tape(source.stream.throttle(for: interval, clock: clock))
            let watched = Tape(source.stream.timeout(after: interval, clock: clock))
            source.fulfill(1)
            source.fulfill(2)  // within the interval: the timer has not fired yet
            #expect(debounced.text == "", "\(interval)")
            #expect(throttled.text == "1", "\(interval)")
            #expect(watched.text == "1 2", "\(interval)")
            clock.advance(by: .zero)
            #expect(debounced.text == "2", "\(interval)")
            #expect(watched.text == "1 2 ✕t |", "\(interval)")
            source.fulfill(3)  // the interval is over: at once, in place of the held 2
            #expect(throttled.text == "1 3", "\(interval)")
            source.finish()
            #expect(debounced.text == "2 3 |", "\(interval)")
            #expect(throttled.text == "1 3 |", "\(interval)")
            #expect(clock.pendingTimerCount == 0)
        }
    }

    // MARK: - Every timed operator

    @Test(arguments: TimedOperator.allCases)
    func `a cancelled token gives one CancellationError and the end, stops the timer and leaves the source`(
        operation: TimedOperator
    ) {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let tape = Tape(operation.apply(to: source.stream, clock: clock, cancellationToken: request.token))
        source.fulfill(1)
        source.fulfill(2)
        request.cancel()
        #expect(tape.text.hasSuffix("✕c |"))
        #expect(clock.pendingTimerCount == 0)
        #expect(source.stream.subscriberCount == 0)
        clock.advance(by: .seconds(10))
        #expect(tape.text.hasSuffix("✕c |"))
    }

    @Test(arguments: TimedOperator.allCases)
    func `a timed stage that nobody holds is released: its timer stops and it leaves its source`(
        operation: TimedOperator
    ) {
        let clock = ManualClock()
        let source = StreamPromise<Int>(capacity: 0)
        weak var released: FutureStream<String>?
        do {
            let timed = operation.apply(to: source.stream, clock: clock, cancellationToken: .none)
            released = timed
            source.fulfill(1)
        }
        #expect(released == nil)
        #expect(clock.pendingTimerCount == 0)
        #expect(source.stream.subscriberCount == 0)
    }

    @Test(arguments: TimedOperator.allCases)
    func `the same schedule on a ManualClock gives the same output in every run`(operation: TimedOperator) {
        func run(seed: UInt64) -> String {
            var random = SplitMix64(seed: seed)
            let clock = ManualClock()
            let source = StreamPromise<Int>(capacity: 0)
            let tape = Tape(operation.apply(to: source.stream, clock: clock, cancellationToken: .none))
            for step in 0..<200 {
                switch random.below(4) {
                case 0: clock.advance(by: .milliseconds(random.below(3_000)))
                case 1: source.reject(TestFailure(code: step))
                default: source.fulfill(step)
                }
            }
            source.finish()
            clock.advance(by: .seconds(10))
            #expect(clock.pendingTimerCount == 0)
            return tape.text
        }
        for seed in 0..<20 {
            let first = run(seed: UInt64(seed))
            #expect(run(seed: UInt64(seed)) == first)
            #expect(first.hasSuffix("|"))
        }
    }
}

/// The timed operators on a stream of `Int`, as a stream of descriptions.
enum TimedOperator: CaseIterable, Sendable {
    case debounce, throttle, throttleFirst, chunksEvery, chunksOfCountOrEvery, timeout, flatMapLatestInterval

    func apply(
        to stream: FutureStream<Int>,
        clock: ManualClock,
        cancellationToken token: CancellationToken
    ) -> FutureStream<String> {
        let timed: FutureStream<String> =
            switch self {
            case .debounce:
                stream.debounce(for: .seconds(1), clock: clock, cancellationToken: token).map(on: .synchronous) {
                    "\($0)"
                }
            case .throttle:
                stream.throttle(for: .seconds(1), clock: clock, cancellationToken: token).map(on: .synchronous) {
                    "\($0)"
                }
            case .throttleFirst:
                stream.throttle(for: .seconds(1), clock: clock, latest: false, cancellationToken: token).map(
                    on: .synchronous
                ) { "\($0)" }
            case .chunksEvery:
                stream.chunks(every: .seconds(1), clock: clock, cancellationToken: token).map(on: .synchronous) {
                    "\($0)"
                }
            case .chunksOfCountOrEvery:
                stream.chunks(ofCount: 3, or: .seconds(1), clock: clock, cancellationToken: token).map(on: .synchronous)
                { "\($0)" }
            case .timeout:
                stream.timeout(after: .seconds(1), clock: clock, cancellationToken: token).map(on: .synchronous) {
                    "\($0)"
                }
            case .flatMapLatestInterval:
                stream.flatMapLatest(on: .synchronous, cancellationToken: token) { value, innerToken in
                    FutureStream<Int>.interval(.seconds(1), clock: clock, cancellationToken: innerToken)
                        .prefix(2)
                        .map(on: .synchronous) { value * 100 + $0 }
                }.map(on: .synchronous) { "\($0)" }
            }
        // The description on `.synchronous`, so that the tape sees each result as it is published.
        return timed
    }
}

/// A context that runs its jobs only when told to: a consumer that is behind, on demand.
final class ManualContext: ExecutionContext {
    private let jobs = Locked<[@Sendable () -> Void]>([])

    func execute(_ work: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(work) }
    }

    /// Runs the queued jobs, and the ones they queue, on the calling thread.
    func runAll() {
        while true {
            let next = jobs.withLock { jobs -> [@Sendable () -> Void] in
                defer { jobs = [] }
                return jobs
            }
            if next.isEmpty { return }
            for job in next { job() }
        }
    }
}
