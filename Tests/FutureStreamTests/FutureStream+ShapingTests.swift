import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// compactMap, compacted, removeDuplicates, prefix, dropFirst, drop(while:), scan: each one's
/// values, errors and end, on `.synchronous`; what a cancelled token does; and what a stage
/// that ends early (prefix) lets go of.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamShapingTests {
    /// Publishes `marks` to `promise`: numbers as values, `✕n` as `TestFailure(code: n)`, `|` as the end.
    static func play(_ marks: String, into promise: StreamPromise<Int>) {
        for mark in marks.split(separator: " ") {
            if mark == "|" {
                promise.finish()
            } else if mark.hasPrefix("✕") {
                promise.reject(TestFailure(code: Int(mark.dropFirst())!))
            } else {
                promise.fulfill(Int(mark)!)
            }
        }
    }

    /// The tape of `operation` applied to a stream that plays `marks`.
    static func tape<U>(_ marks: String, _ operation: (FutureStream<Int>) -> FutureStream<U>) -> String {
        let promise = StreamPromise<Int>(capacity: 0)
        let tape = Tape(operation(promise.stream))
        play(marks, into: promise)
        return tape.text
    }

    @Test func `compactMap leaves out nils, passes errors and turns a throw into an error`() {
        let text = Self.tape("1 2 ✕7 3 4 |") { stream in
            stream.compactMap(on: .synchronous) { value -> Int? in
                if value == 4 { throw TestFailure(code: 4) }
                return value.isMultiple(of: 2) ? nil : value * 10
            }
        }
        #expect(text == "10 ✕7 30 ✕4 |")
    }

    @Test func `compacted leaves out the nil values`() {
        let promise = StreamPromise<Int?>(capacity: 0)
        let tape = Tape(promise.stream.compacted())
        for value in [1, nil, 3, nil] as [Int?] { promise.fulfill(value) }
        promise.reject(TestFailure(code: 2))
        promise.finish()
        #expect(tape.text == "1 3 ✕2 |")
    }

    @Test func `removeDuplicates compares with the last value that passed, errors pass and are not compared`() {
        #expect(Self.tape("1 1 2 ✕5 2 2 1 1 |") { $0.removeDuplicates() } == "1 2 ✕5 1 |")
        // Compared with the last value that passed, as swift-async-algorithms does: 1, 2 (|2-1| ≤ 1:
        // left out), 3 (|3-1| > 1: passes).
        let text = Self.tape("1 2 3 4 |") { stream in
            stream.removeDuplicates(on: .synchronous) { previous, value in abs(previous - value) <= 1 }
        }
        #expect(text == "1 3 |")
    }

    @Test func `removeDuplicates by a throwing test publishes the error in place of the value`() {
        let text = Self.tape("1 2 3 |") { stream in
            stream.removeDuplicates(on: .synchronous) { _, value in
                if value == 2 { throw TestFailure(code: 2) }
                return false
            }
        }
        #expect(text == "1 ✕2 3 |")
    }

    @Test func `prefix counts values, passes errors, and ends and leaves its source at the last one`() {
        let promise = StreamPromise<Int>(capacity: 0)
        let prefix = promise.stream.prefix(2)
        let tape = Tape(prefix)
        Self.play("1 ✕9 2", into: promise)
        #expect(tape.text == "1 ✕9 2 |")
        #expect(prefix.isFinished)
        #expect(promise.stream.subscriberCount == 0)  // left at once, though `prefix` is still held
        Self.play("3 |", into: promise)
        #expect(tape.text == "1 ✕9 2 |")
    }

    @Test func `prefix of zero, or of a negative count, has finished`() {
        let promise = StreamPromise<Int>(capacity: 0)
        #expect(promise.stream.prefix(0).isFinished)
        #expect(promise.stream.prefix(-3).isFinished)
        #expect(promise.stream.subscriberCount == 0)
    }

    @Test func `prefix satisfied by the kept results leaves its source at once`() {
        let promise = StreamPromise<Int>(capacity: 5)
        for value in 1...5 { promise.fulfill(value) }
        let prefix = promise.stream.prefix(2)
        #expect(Tape(prefix).text == "1 2 |")
        #expect(promise.stream.subscriberCount == 0)
    }

    @Test func `prefix while ends at the first value that fails, and at a throw after publishing it`() {
        #expect(Self.tape("1 ✕9 2 5 3 |") { $0.prefix(on: .synchronous) { $0 < 5 } } == "1 ✕9 2 |")
        let text = Self.tape("1 2 3 |") { stream in
            stream.prefix(on: .synchronous) { value in
                if value == 2 { throw TestFailure(code: 2) }
                return true
            }
        }
        #expect(text == "1 ✕2 |")
    }

    @Test func `dropFirst counts values and passes errors`() {
        #expect(Self.tape("1 ✕9 2 3 4 |") { $0.dropFirst(2) } == "✕9 3 4 |")
        #expect(Self.tape("1 2 |") { $0.dropFirst() } == "2 |")
        #expect(Self.tape("1 2 |") { $0.dropFirst(-1) } == "1 2 |")
    }

    @Test func `counts at their extremes have a meaning: prefix and dropFirst of Int max and Int min`() {
        #expect(Self.tape("1 ✕9 2 |") { $0.prefix(.max) } == "1 ✕9 2 |")
        #expect(Self.tape("1 2 |") { $0.prefix(.min) } == "|")
        #expect(Self.tape("1 ✕9 2 |") { $0.dropFirst(.max) } == "✕9 |")
        #expect(Self.tape("1 2 |") { $0.dropFirst(.min) } == "1 2 |")
    }

    @Test func `chunks of count Int max gathers every value into the one array published at the end`() {
        #expect(Self.tape("1 ✕9 2 3 |") { $0.chunks(ofCount: .max) } == "✕9 [1, 2, 3] |")
        #expect(Self.tape("|") { $0.chunks(ofCount: .max) } == "|")
    }

    @Test func `drop while stops testing at the first value that fails`() {
        #expect(Self.tape("0 0 ✕9 5 0 6 |") { $0.drop(on: .synchronous) { $0 == 0 } } == "✕9 5 0 6 |")
    }

    @Test func `scan publishes each running value; errors and throws leave it as it was`() {
        let text = Self.tape("1 2 ✕9 3 4 |") { stream in
            stream.scan(0, on: .synchronous) { total, value in
                if value == 3 { throw TestFailure(code: 3) }
                return total + value
            }
        }
        #expect(text == "1 3 ✕9 ✕3 7 |")
    }

    @Test func `scan keeps the order of its values on a concurrent context`() async {
        let promise = StreamPromise<Int>(capacity: .max)
        for value in 1...500 { promise.fulfill(value) }
        promise.finish()
        let totals = promise.stream.scan(0, on: .default) { $0 + $1 }
        let recorder = StreamRecorder<Int>().record(totals)
        await recorder.finished()
        #expect(recorder.values == (1...500).map { $0 * ($0 + 1) / 2 })
    }

    @Test(arguments: ShapingOperator.allCases)
    func `a cancelled token gives one CancellationError and the end, leaves the source and releases the closure`(
        operation: ShapingOperator
    ) {
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let counter = DeinitCounter()
        let shaped = operation.apply(to: promise.stream, capturing: counter.make(), cancellationToken: request.token)
        let tape = Tape(shaped)
        promise.fulfill(1)
        request.cancel()
        promise.fulfill(2)
        #expect(tape.text.hasSuffix("✕c |"))
        #expect(!tape.text.contains("2"))
        #expect(promise.stream.subscriberCount == 0)
        #expect(counter.deallocated == 1)
    }

    @Test(arguments: ShapingOperator.allCases)
    func `an operator's stage that nobody holds is released and leaves its source`(operation: ShapingOperator) {
        let promise = StreamPromise<Int>(capacity: 0)
        let counter = DeinitCounter()
        _ = operation.apply(to: promise.stream, capturing: counter.make(), cancellationToken: .none)
        #expect(promise.stream.subscriberCount == 0)
        #expect(counter.deallocated == 1)
    }

    @Test(arguments: ShapingOperator.allCases)
    func `an already cancelled token gives a stream that holds one CancellationError and has finished`(
        operation: ShapingOperator
    ) {
        let promise = StreamPromise<Int>(capacity: 1)  // the new stream keeps one result too
        let shaped = operation.apply(to: promise.stream, capturing: nil, cancellationToken: .cancelled)
        #expect(Tape(shaped).text == "✕c |")
        #expect(promise.stream.subscriberCount == 0)
    }
    // MARK: - Async and actor forms

    /// As `tape(_:_:)`, for an operator whose closure runs in a task: waits until the new stream
    /// has finished. Also returns how many subscribers the source has left.
    static func tape<U>(
        _ marks: String,
        async operation: (FutureStream<Int>) -> FutureStream<U>
    ) async -> (text: String, sourceSubscribers: Int) {
        let promise = StreamPromise<Int>(capacity: 0)
        let shaped = operation(promise.stream)
        let tape = Tape(shaped)
        play(marks, into: promise)
        for await _ in shaped.results {}  // until it has finished
        // The tape is a subscriber of its own: no rule orders its end before the loop's.
        await waitUntil { tape.text.hasSuffix("|") }
        return (tape.text, promise.stream.subscriberCount)
    }

    actor Isolation {}

    /// The async forms on a context and on the main actor, and the form isolated to an actor.
    enum AsyncForm: CaseIterable, Sendable {
        case context, mainActor, actor

        /// `body` called as the form calls its closure, checking it runs where the form says.
        func compactMap(
            _ stream: FutureStream<Int>,
            _ body: @escaping @Sendable (Int) throws -> Int?
        ) -> FutureStream<Int> {
            switch self {
            case .context:
                stream.compactMap { value in
                    await Task.yield()
                    return try body(value)
                }
            case .mainActor:
                stream.compactMap(on: .mainActor) { value in
                    MainActor.assertIsolated()
                    await Task.yield()
                    return try body(value)
                }
            case .actor:
                stream.compactMap(on: Isolation()) { isolation, value in
                    isolation.assertIsolated()
                    return try body(value)
                }
            }
        }

        func removeDuplicates(
            _ stream: FutureStream<Int>,
            _ body: @escaping @Sendable (Int, Int) throws -> Bool
        ) -> FutureStream<Int> {
            switch self {
            case .context:
                stream.removeDuplicates { previous, value in
                    await Task.yield()
                    return try body(previous, value)
                }
            case .mainActor:
                stream.removeDuplicates(on: .mainActor) { previous, value in
                    MainActor.assertIsolated()
                    await Task.yield()
                    return try body(previous, value)
                }
            case .actor:
                stream.removeDuplicates(on: Isolation()) { isolation, previous, value in
                    isolation.assertIsolated()
                    return try body(previous, value)
                }
            }
        }

        func prefix(_ stream: FutureStream<Int>, _ body: @escaping @Sendable (Int) throws -> Bool) -> FutureStream<Int>
        {
            switch self {
            case .context:
                stream.prefix { value in
                    await Task.yield()
                    return try body(value)
                }
            case .mainActor:
                stream.prefix(on: .mainActor) { value in
                    MainActor.assertIsolated()
                    await Task.yield()
                    return try body(value)
                }
            case .actor:
                stream.prefix(on: Isolation()) { isolation, value in
                    isolation.assertIsolated()
                    return try body(value)
                }
            }
        }

        func drop(_ stream: FutureStream<Int>, _ body: @escaping @Sendable (Int) throws -> Bool) -> FutureStream<Int> {
            switch self {
            case .context:
                stream.drop { value in
                    await Task.yield()
                    return try body(value)
                }
            case .mainActor:
                stream.drop(on: .mainActor) { value in
                    MainActor.assertIsolated()
                    await Task.yield()
                    return try body(value)
                }
            case .actor:
                stream.drop(on: Isolation()) { isolation, value in
                    isolation.assertIsolated()
                    return try body(value)
                }
            }
        }

        func scan(
            _ stream: FutureStream<Int>,
            _ body: @escaping @Sendable (Int, Int) throws -> Int
        ) -> FutureStream<Int> {
            switch self {
            case .context:
                stream.scan(0) { total, value in
                    await Task.yield()
                    return try body(total, value)
                }
            case .mainActor:
                stream.scan(0, on: .mainActor) { total, value in
                    MainActor.assertIsolated()
                    await Task.yield()
                    return try body(total, value)
                }
            case .actor:
                stream.scan(0, on: Isolation()) { isolation, total, value in
                    isolation.assertIsolated()
                    return try body(total, value)
                }
            }
        }
    }

    @Test(arguments: AsyncForm.allCases)
    func
        `async and actor forms of compactMap, removeDuplicates, prefix, drop and scan give what the synchronous forms give`(
            form: AsyncForm
        ) async
    {
        let compacted = await Self.tape("1 2 ✕7 3 4 |") { stream in
            form.compactMap(stream) { value in
                if value == 4 { throw TestFailure(code: 4) }
                return value.isMultiple(of: 2) ? nil : value * 10
            }
        }
        #expect(compacted.text == "10 ✕7 30 ✕4 |")
        let unique = await Self.tape("1 2 3 4 ✕5 9 |") { stream in
            form.removeDuplicates(stream) { previous, value in
                if value == 9 { throw TestFailure(code: 9) }
                return abs(previous - value) <= 1
            }
        }
        #expect(unique.text == "1 3 ✕5 ✕9 |")
        let prefix = await Self.tape("1 ✕9 2 5 3 |") { stream in form.prefix(stream) { $0 < 5 } }
        #expect(prefix.text == "1 ✕9 2 |")
        #expect(prefix.sourceSubscribers == 0)
        let prefixThrowing = await Self.tape("1 2 3 |") { stream in
            form.prefix(stream) { value in
                if value == 2 { throw TestFailure(code: 2) }
                return true
            }
        }
        #expect(prefixThrowing.text == "1 ✕2 |")
        let dropped = await Self.tape("0 0 ✕9 5 0 6 |") { stream in form.drop(stream) { $0 == 0 } }
        #expect(dropped.text == "✕9 5 0 6 |")
        let totals = await Self.tape("1 2 ✕9 3 4 |") { stream in
            form.scan(stream) { total, value in
                if value == 3 { throw TestFailure(code: 3) }
                return total + value
            }
        }
        #expect(totals.text == "1 3 ✕9 ✕3 7 |")
    }

    @Test func `async scan awaits one value at a time, in order`() async {
        let probe = OverlapProbe()
        let promise = StreamPromise<Int>(capacity: .max)
        for value in 1...200 { promise.fulfill(value) }
        promise.finish()
        let totals = promise.stream.scan(0) { total, value in
            await probe.yieldInside()
            return total + value
        }
        let recorder = StreamRecorder<Int>().record(totals)
        await recorder.finished()
        #expect(recorder.values == (1...200).map { $0 * ($0 + 1) / 2 })
        #expect(probe.overlaps == 0)
    }

    @Test
    func `async prefix while: a cancelled token cancels the running task, finishes the stream and leaves the source`()
        async
    {
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let started = Promise<Void>()
        let sawCancellation = Promise<Bool>()
        let prefix = promise.stream.prefix(cancellationToken: request.token) { _ in
            started.fulfill(())
            while !Task.isCancelled { await Task.yield() }
            sawCancellation.fulfill(true)
            return true
        }
        let tape = Tape(prefix)
        promise.fulfill(1)
        _ = try? await started.future.value()
        request.cancel()
        #expect(tape.text == "✕c |")
        #expect((try? await sawCancellation.future.value()) == true)
        #expect(promise.stream.subscriberCount == 0)
    }
}

/// The one-source operators, each with a closure (where it takes one) that captures `tracked`.
enum ShapingOperator: CaseIterable, Sendable {
    case compactMap, compacted, removeDuplicates, removeDuplicatesBy, prefix, prefixWhile, dropFirst, dropWhile, scan

    func apply(
        to stream: FutureStream<Int>,
        capturing tracked: Tracked?,
        cancellationToken token: CancellationToken
    ) -> FutureStream<Int> {
        switch self {
        case .compactMap:
            stream.compactMap(on: .synchronous, cancellationToken: token) { value -> Int? in
                tracked?.touch()
                return value
            }
        case .compacted:
            stream.map(on: .synchronous, cancellationToken: token) { value -> Int? in
                tracked?.touch()
                return value
            }.compacted(cancellationToken: token)
        case .removeDuplicates:
            stream.map(on: .synchronous, cancellationToken: token) { value in
                tracked?.touch()
                return value
            }.removeDuplicates(cancellationToken: token)
        case .removeDuplicatesBy:
            stream.removeDuplicates(on: .synchronous, cancellationToken: token) { previous, value in
                tracked?.touch()
                return previous == value
            }
        case .prefix:
            stream.map(on: .synchronous, cancellationToken: token) { value in
                tracked?.touch()
                return value
            }.prefix(10, cancellationToken: token)
        case .prefixWhile:
            stream.prefix(on: .synchronous, cancellationToken: token) { _ in
                tracked?.touch()
                return true
            }
        case .dropFirst:
            stream.map(on: .synchronous, cancellationToken: token) { value in
                tracked?.touch()
                return value
            }.dropFirst(0, cancellationToken: token)
        case .dropWhile:
            stream.drop(on: .synchronous, cancellationToken: token) { _ in
                tracked?.touch()
                return false
            }
        case .scan:
            stream.scan(0, on: .synchronous, cancellationToken: token) { _, value in
                tracked?.touch()
                return value
            }
        }
    }
}
