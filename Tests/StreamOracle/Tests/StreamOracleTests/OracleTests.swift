import AsyncAlgorithms
import Foundation
import FutureLib
import Testing

/// FutureLib's operators against swift-async-algorithms 1.1.4 on seeded random schedules: the
/// outputs must be equal up to the first end or error (after an error FutureLib's streams go on,
/// by design; Documentation/Streams.md). A failing seed replays: its number is in the message.
@Suite(.serialized, .timeLimit(.minutes(Load.minutes(10))))
struct StreamOracleTests {
    /// 200 seeds per operator, or `STREAM_ORACLE_SEEDS`.
    static let seeds = 0..<UInt64(ProcessInfo.processInfo.environment["STREAM_ORACLE_SEEDS"].flatMap { Int($0) } ?? 200)

    // MARK: - One input

    /// A schedule for one input: values in `0..<values`, now and then a failure, a clock
    /// advance (when `advances`) or the end.
    static func schedule(seed: UInt64, values: Int, advances: Bool = false) -> [Event] {
        var random = SplitMix64(seed: seed)
        var events: [Event] = []
        for step in 0..<30 {
            switch random.below(100) {
            case 0..<4:
                events.append(.fail(step))
                return events
            case 4..<8:
                events.append(.finish)
                return events
            case 8..<40 where advances:
                events.append(.advance(.milliseconds(250 * random.below(12))))
            default:
                events.append(.value(random.below(values)))
            }
        }
        return events
    }

    enum Event: Sendable {
        case value(Int)
        case fail(Int)
        case finish
        case advance(Duration)
    }

    /// Feeds `events` to one input, in lockstep with both libraries' operator.
    static func run<Ours: Sendable, Theirs: AsyncSequence & Sendable>(
        _ events: [Event],
        clock: ManualClock = ManualClock(),
        oracleClock: OracleClock = OracleClock(),
        readsClock: Bool = false,
        ours: (FutureStream<Int>) -> FutureStream<Ours>,
        theirs: (Pulled<Int>) -> Theirs,
        describeOurs: @escaping @Sendable (Ours) -> String,
        describeTheirs: @escaping @Sendable (Theirs.Element) -> String
    ) async -> (ours: [String], oracle: [String]) {
        let input = Input<Int>()
        let ourMarks = ours(input.promise.stream).record(describeOurs)
        let (oracleMarks, task) = consume(theirs(input.sequence), describeTheirs)
        let steps: [@Sendable () -> Void] = events.map { event in
            {
                switch event {
                case .value(let value): input.send(value)
                case .fail(let code): input.fail(code)
                case .finish: input.finish()
                case .advance(let duration):
                    oracleClock.advance(by: duration)
                    clock.advance(by: duration)
                }
            }
        }
        let outcome = await lockstep(
            ours: ourMarks,
            oracle: oracleMarks,
            steps: steps,
            // The oracle pulled every element, and (throttle) read the clock after each.
            settled: { input.isDrained && (!readsClock || oracleClock.reads > input.pulled) },
            finishAll: {
                if !input.isFinished { input.finish() }
                // The oracle sleeps through the rest of an interval at the end; FutureLib waits for its timer.
                clock.advance(by: .seconds(60))
            }
        )
        task.cancel()
        return outcome
    }

    @Test func `removeDuplicates agrees with swift-async-algorithms`() async {
        for seed in Self.seeds {
            let (ours, oracle) = await Self.run(
                Self.schedule(seed: seed, values: 3),
                ours: { $0.removeDuplicates() },
                theirs: { $0.removeDuplicates() },
                describeOurs: { "\($0)" },
                describeTheirs: { "\($0)" }
            )
            #expect(ours == oracle, "seed \(seed)")
        }
    }

    @Test func `chunks of count agrees with swift-async-algorithms`() async {
        for seed in Self.seeds {
            let (ours, oracle) = await Self.run(
                Self.schedule(seed: seed, values: 10),
                ours: { $0.chunks(ofCount: 3) },
                theirs: { $0.chunks(ofCount: 3) },
                describeOurs: { "\($0)" },
                describeTheirs: { "\($0)" }
            )
            #expect(ours == oracle, "seed \(seed)")
        }
    }

    @Test func `scan agrees with swift-async-algorithms' reductions`() async {
        for seed in Self.seeds {
            let (ours, oracle) = await Self.run(
                Self.schedule(seed: seed, values: 10),
                ours: { $0.scan(0, on: .synchronous) { $0 + $1 } },
                theirs: { $0.reductions(0) { $0 + $1 } },
                describeOurs: { "\($0)" },
                describeTheirs: { "\($0)" }
            )
            #expect(ours == oracle, "seed \(seed)")
        }
    }

    @Test func `compacted agrees with swift-async-algorithms`() async {
        // A value divisible by 3 stands for nil.
        for seed in Self.seeds {
            let (ours, oracle) = await Self.run(
                Self.schedule(seed: seed, values: 9),
                ours: { $0.map(on: .synchronous) { $0 % 3 == 0 ? nil : $0 }.compacted() },
                theirs: { sequence in sequence.map { @Sendable in $0 % 3 == 0 ? nil : $0 }.compacted() },
                describeOurs: { "\($0)" },
                describeTheirs: { "\($0)" }
            )
            #expect(ours == oracle, "seed \(seed)")
        }
    }

    @Test(arguments: [true, false])
    func `throttle agrees with swift-async-algorithms on a clock moved in step`(latest: Bool) async {
        for seed in Self.seeds {
            let clock = ManualClock()
            let oracleClock = OracleClock()
            let (ours, oracle) = await Self.run(
                Self.schedule(seed: seed, values: 100, advances: true),
                clock: clock,
                oracleClock: oracleClock,
                readsClock: true,
                ours: { $0.throttle(for: .seconds(1), clock: clock, latest: latest) },
                theirs: { $0._throttle(for: .seconds(1), clock: oracleClock, latest: latest) },
                describeOurs: { "\($0)" },
                describeTheirs: { "\($0)" }
            )
            #expect(ours == oracle, "seed \(seed), latest \(latest)")
        }
    }

    @Test func `debounce agrees with swift-async-algorithms on a clock moved in step`() async {
        // swift-async-algorithms' debounce sleeps in a task of its own, on a `SleepingClock` that
        // keeps its sleeps in a list; FutureLib's runs on a `ManualClock` advanced by the same
        // durations. Values are told apart (each is its step), so that the oracle's waiting value is
        // known: the one it pulled last, unless it was published. A step is taken only when the oracle
        // is quiescent: it asks for the next element (done with the last), and, while a value
        // waits, its task sleeps in the list (not between a wake and its next sleep or its value).
        for seed in Self.seeds {
            let events = Self.schedule(seed: seed, values: 1, advances: true).enumerated().map { step, event in
                if case .value = event { Event.value(step) } else { event }
            }
            let clock = ManualClock()
            let oracleClock = SleepingClock()
            let input = Input<Int>()
            let ourMarks = input.promise.stream.debounce(for: .seconds(1), clock: clock).record { "\($0)" }
            let (oracleMarks, task) = consume(input.sequence.debounce(for: .seconds(1), clock: oracleClock)) { "\($0)" }
            let steps: [@Sendable () -> Void] = events.map { event in
                {
                    switch event {
                    case .value(let value): input.send(value)
                    case .fail(let code): input.fail(code)
                    case .finish: input.finish()
                    case .advance(let duration):
                        oracleClock.advance(by: duration)
                        clock.advance(by: duration)
                    }
                }
            }
            let (ours, oracle) = await lockstep(
                ours: ourMarks,
                oracle: oracleMarks,
                steps: steps,
                settled: {
                    if oracleMarks.hasEnded || input.isFinished { return true }
                    guard input.isDrained, input.isAsking else { return false }
                    let isWaiting = input.lastPulled.map { $0 != oracleMarks.all.last } ?? false
                    return !isWaiting || oracleClock.sleeperCount > 0
                },
                finishAll: { if !input.isFinished { input.finish() } }
            )
            task.cancel()
            #expect(ours == oracle, "seed \(seed)")
        }
    }

    // MARK: - Several inputs

    enum MultiEvent: Sendable {
        case value(input: Int, Int)
        case fail(input: Int, Int)
        case finish(input: Int)
    }

    /// A schedule for `inputs` inputs; `canFail` says whether an input may fail now (the
    /// events so far), for the operators where the oracle's pull order decides when a failure
    /// behind waiting values surfaces (see the tests).
    static func schedule(
        seed: UInt64,
        inputs: Int,
        canFail: ([MultiEvent], Int) -> Bool = { _, _ in true },
        canSend: ([MultiEvent], Int) -> Bool = { _, _ in true }
    ) -> [MultiEvent] {
        var random = SplitMix64(seed: seed)
        var events: [MultiEvent] = []
        var open = Array(0..<inputs)
        for step in 0..<40 where !open.isEmpty {
            let input = open[random.below(open.count)]
            switch random.below(100) {
            case 0..<3 where canFail(events, input):
                events.append(.fail(input: input, step))
                return events
            case 3..<8:
                events.append(.finish(input: input))
                open.removeAll { $0 == input }
            default:
                if canSend(events, input) { events.append(.value(input: input, step)) }
            }
        }
        return events
    }

    /// Which of two inputs have sent a value in `events`.
    static func sent(_ events: [MultiEvent]) -> [Bool] {
        [0, 1].map { side in events.contains { if case .value(side, _) = $0 { true } else { false } } }
    }

    static func run<Ours: Sendable, Theirs: AsyncSequence & Sendable>(
        _ events: [MultiEvent],
        inputs count: Int,
        ours: ([FutureStream<Int>]) -> FutureStream<Ours>,
        theirs: ([Pulled<Int>]) -> Theirs,
        describeOurs: @escaping @Sendable (Ours) -> String,
        describeTheirs: @escaping @Sendable (Theirs.Element) -> String
    ) async -> (ours: [String], oracle: [String]) {
        let inputs = (0..<count).map { _ in Input<Int>() }
        let ourMarks = ours(inputs.map(\.promise.stream)).record(describeOurs)
        let (oracleMarks, task) = consume(theirs(inputs.map(\.sequence)), describeTheirs)
        let steps: [@Sendable () -> Void] = events.map { event in
            {
                switch event {
                case .value(let input, let value): inputs[input].send(value)
                case .fail(let input, let code): inputs[input].fail(code)
                case .finish(let input): inputs[input].finish()
                }
            }
        }
        let outcome = await lockstep(
            ours: ourMarks,
            oracle: oracleMarks,
            steps: steps,
            finishAll: { for input in inputs where !input.isFinished { input.finish() } }
        )
        task.cancel()
        return outcome
    }

    @Test func `merge of three agrees with swift-async-algorithms`() async {
        for seed in Self.seeds {
            let (ours, oracle) = await Self.run(
                Self.schedule(seed: seed, inputs: 3),
                inputs: 3,
                ours: { FutureLib.merge($0) },
                theirs: { AsyncAlgorithms.merge($0[0], $0[1], $0[2]) },
                describeOurs: { "\($0)" },
                describeTheirs: { "\($0)" }
            )
            #expect(ours == oracle, "seed \(seed)")
        }
    }

    @Test func `zip agrees with swift-async-algorithms`() async {
        // FutureLib publishes a failure at once; swift-async-algorithms' zip throws it once its
        // pull reaches it, behind the input's values still waiting for a partner. The schedules
        // fail an input only when none of its values waits (FutureStream+CombiningTests covers
        // the other case).
        for seed in Self.seeds {
            let events = Self.schedule(seed: seed, inputs: 2) { events, input in
                Self.waitingInZip(events, input: input) == 0
            }
            let (ours, oracle) = await Self.run(
                events,
                inputs: 2,
                ours: { FutureLib.zip($0[0], $0[1]) },
                theirs: { AsyncAlgorithms.zip($0[0], $0[1]) },
                describeOurs: { "\($0)" },
                describeTheirs: { "\($0)" }
            )
            #expect(ours == oracle, "seed \(seed)")
        }
    }

    @Test func `combineLatest agrees with swift-async-algorithms`() async {
        // A documented difference: before the first pair, FutureLib pairs the latest value of each
        // input (as Combine and RxSwift do), where swift-async-algorithms pulls the values its base
        // sequences buffered one by one and pairs each. The schedules send one value per input
        // before the first pair (FutureStream+CombiningTests covers more), and fail an input before
        // it only when it has sent nothing (the oracle's failure would wait behind its values).
        for seed in Self.seeds {
            let events = Self.schedule(
                seed: seed,
                inputs: 2,
                canFail: { events, input in
                    let sent = Self.sent(events)
                    return (sent[0] && sent[1]) || !sent[input]
                },
                canSend: { events, input in
                    let sent = Self.sent(events)
                    return (sent[0] && sent[1]) || !sent[input]
                }
            )
            let (ours, oracle) = await Self.run(
                events,
                inputs: 2,
                ours: { FutureLib.combineLatest($0[0], $0[1]) },
                theirs: { AsyncAlgorithms.combineLatest($0[0], $0[1]) },
                describeOurs: { "\($0)" },
                describeTheirs: { "\($0)" }
            )
            #expect(ours == oracle, "seed \(seed)")
        }
    }

    /// How many values of `input` wait for a partner in a zip after `events`.
    static func waitingInZip(_ events: [MultiEvent], input: Int) -> Int {
        var waiting = [0, 0]
        for event in events {
            guard case .value(let side, _) = event else { continue }
            if waiting[1 - side] > 0 { waiting[1 - side] -= 1 } else { waiting[side] += 1 }
        }
        return waiting[input]
    }
}
