import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// collect, reduce, last, contains, allSatisfy (each a future of the whole stream), and the
/// empty and never-ending streams.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamReduceTests {
    /// A finished stream that played `marks` (as `FutureStreamShapingTests.play`), keeping them all.
    static func stream(_ marks: String) -> FutureStream<Int> {
        let promise = StreamPromise<Int>(capacity: .max)
        FutureStreamShapingTests.play(marks, into: promise)
        return promise.stream
    }

    @Test func `collect gives every value in order once the stream finished`() async {
        #expect(await mark(Self.stream("1 2 3 |").collect()) == "[1, 2, 3]")
        #expect(await mark(Self.stream("|").collect()) == "[]")
    }

    @Test func `reduce combines the values in order; no value gives the initial result`() async {
        #expect(await mark(Self.stream("1 2 3 |").reduce(10, on: .synchronous) { $0 * 2 + $1 }) == "91")
        #expect(await mark(Self.stream("|").reduce(10, on: .default) { $0 + $1 }) == "10")
        let thrown = Self.stream("1 2 |").reduce(0, on: .synchronous) { _, value in
            if value == 2 { throw TestFailure(code: 2) }
            return value
        }
        #expect(await mark(thrown) == "✕2")
    }

    @Test func `last gives the last value, or noSuchElement for a stream without one`() async {
        #expect(await mark(Self.stream("1 2 3 |").last()) == "3")
        let none = await settled(Self.stream("|").last())
        #expect(none.futureError == .noSuchElement)
    }

    @Test func `contains and allSatisfy decide at the first answer and unsubscribe`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let found = promise.stream.contains(3)
        let valid = promise.stream.allSatisfy(on: .synchronous) { $0 < 2 }
        let above = promise.stream.contains(on: .synchronous) { $0 > 100 }
        #expect(promise.stream.subscriberCount == 3)
        promise.fulfill(1)
        promise.fulfill(3)  // decides `found` and `valid`
        #expect(await mark(found) == "true")
        #expect(await mark(valid) == "false")
        #expect(promise.stream.subscriberCount == 1)
        promise.finish()
        #expect(await mark(above) == "false")
        #expect(await mark(Self.stream("|").allSatisfy(on: .synchronous) { _ in false }) == "true")
    }

    @Test func `the stream's first error fails each of them, as it ends a for try await loop`() async {
        let stream = Self.stream("1 ✕4 2 |")
        #expect(await mark(stream.collect()) == "✕4")
        #expect(await mark(stream.reduce(0, on: .synchronous) { $0 + $1 }) == "✕4")
        #expect(await mark(stream.last()) == "✕4")
        #expect(await mark(stream.contains(2)) == "✕4")
        #expect(await mark(stream.allSatisfy(on: .synchronous) { $0 > 0 }) == "✕4")
    }

    @Test func `a cancelled token fails them with CancellationError, unsubscribes and releases the closure`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let counter = DeinitCounter()
        let tracked = counter.make()
        let futures: [Future<String>] = [
            promise.stream.collect(cancellationToken: request.token).map(on: .synchronous) { "\($0)" },
            promise.stream.reduce(0, on: .synchronous, cancellationToken: request.token) { partial, value in
                tracked.touch()
                return partial + value
            }.map(on: .synchronous) { "\($0)" },
            promise.stream.last(cancellationToken: request.token).map(on: .synchronous) { "\($0)" },
            promise.stream.contains(9, cancellationToken: request.token).map(on: .synchronous) { "\($0)" },
            promise.stream.allSatisfy(on: .synchronous, cancellationToken: request.token) { _ in
                tracked.touch()
                return true
            }.map(on: .synchronous) { "\($0)" },
        ]
        _ = consume tracked
        promise.fulfill(1)
        request.cancel()
        for future in futures { #expect(await mark(future) == "✕c") }
        #expect(promise.stream.subscriberCount == 0)
        #expect(counter.deallocated == 1)
        #expect(await mark(promise.stream.collect(cancellationToken: .cancelled)) == "✕c")
    }

    // MARK: - Async and actor forms

    actor Isolation {}

    @Test(arguments: FutureStreamShapingTests.AsyncForm.allCases)
    func `async and actor forms of reduce, contains and allSatisfy give what the synchronous forms give`(
        form: FutureStreamShapingTests.AsyncForm
    ) async {
        func reduce(_ stream: FutureStream<Int>, _ body: @escaping @Sendable (Int, Int) throws -> Int) -> Future<Int> {
            switch form {
            case .context:
                stream.reduce(10) { partial, value in
                    await Task.yield()
                    return try body(partial, value)
                }
            case .mainActor:
                stream.reduce(10, on: .mainActor) { partial, value in
                    MainActor.assertIsolated()
                    await Task.yield()
                    return try body(partial, value)
                }
            case .actor:
                stream.reduce(10, on: Isolation()) { isolation, partial, value in
                    isolation.assertIsolated()
                    return try body(partial, value)
                }
            }
        }
        func contains(_ stream: FutureStream<Int>, _ body: @escaping @Sendable (Int) throws -> Bool) -> Future<Bool> {
            switch form {
            case .context:
                stream.contains { value in
                    await Task.yield()
                    return try body(value)
                }
            case .mainActor:
                stream.contains(on: .mainActor) { value in
                    MainActor.assertIsolated()
                    await Task.yield()
                    return try body(value)
                }
            case .actor:
                stream.contains(on: Isolation()) { isolation, value in
                    isolation.assertIsolated()
                    return try body(value)
                }
            }
        }
        func allSatisfy(_ stream: FutureStream<Int>, _ body: @escaping @Sendable (Int) throws -> Bool) -> Future<Bool> {
            switch form {
            case .context:
                stream.allSatisfy { value in
                    await Task.yield()
                    return try body(value)
                }
            case .mainActor:
                stream.allSatisfy(on: .mainActor) { value in
                    MainActor.assertIsolated()
                    await Task.yield()
                    return try body(value)
                }
            case .actor:
                stream.allSatisfy(on: Isolation()) { isolation, value in
                    isolation.assertIsolated()
                    return try body(value)
                }
            }
        }
        #expect(await mark(reduce(Self.stream("1 2 3 |")) { $0 * 2 + $1 }) == "91")
        #expect(await mark(reduce(Self.stream("|")) { $0 + $1 }) == "10")
        #expect(await mark(reduce(Self.stream("1 ✕4 2 |")) { $0 + $1 }) == "✕4")
        let thrown = reduce(Self.stream("1 2 |")) { _, value in
            if value == 2 { throw TestFailure(code: 2) }
            return value
        }
        #expect(await mark(thrown) == "✕2")
        #expect(await mark(contains(Self.stream("1 3 5 |")) { $0 == 3 }) == "true")
        #expect(await mark(contains(Self.stream("1 5 |")) { $0 == 3 }) == "false")
        #expect(await mark(allSatisfy(Self.stream("1 3 -1 |")) { $0 > 0 }) == "false")
        #expect(await mark(allSatisfy(Self.stream("|")) { _ in false }) == "true")
        // Decided early, it unsubscribes from a stream that goes on.
        let promise = StreamPromise<Int>(capacity: 0)
        let found = contains(promise.stream) { $0 == 2 }
        promise.fulfill(1)
        promise.fulfill(2)
        #expect(await mark(found) == "true")
        // It unsubscribes right after completing the future, on the thread that decided it: maybe still to come
        // when the awaiting task resumes.
        #expect(await eventually { promise.stream.subscriberCount == 0 })
        promise.finish()
    }

    @Test func `async reduce: a cancelled token cancels the running task, fails the future and unsubscribes`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let started = Promise<Void>()
        let sawCancellation = Promise<Bool>()
        let total = promise.stream.reduce(0, cancellationToken: request.token) { partial, value in
            started.fulfill(())
            while !Task.isCancelled { await Task.yield() }
            sawCancellation.fulfill(true)
            return partial + value
        }
        promise.fulfill(1)
        _ = try? await started.future.value()
        request.cancel()
        #expect(await mark(total) == "✕c")
        #expect((try? await sawCancellation.future.value()) == true)
        #expect(promise.stream.subscriberCount == 0)
    }

    @Test
    func `empty has finished with no result; never has not finished and keeps its subscriber only until its token`()
        async
    {
        #expect(Tape(FutureStream<Int>.empty).text == "|")
        #expect(await mark(FutureStream<Int>.empty.collect()) == "[]")
        let request = CancellationRequest()
        let never = FutureStream<Int>.never
        let counter = DeinitCounter()
        let tracked = counter.make()
        never.onComplete(on: .synchronous, cancellationToken: request.token) { _ in tracked.touch() }
        _ = consume tracked
        #expect(!never.isFinished)
        #expect(never.subscriberCount == 1)
        request.cancel()
        #expect(never.subscriberCount == 0)
        #expect(counter.deallocated == 1)
    }

    @Test func `a never-ending stream that nobody holds is released, with its subscribers' stages`() {
        weak var released: FutureStream<Int>?
        do {
            let never = FutureStream<Int>.never
            released = never
            _ = never.map { $0 + 1 }
        }
        #expect(released == nil)
    }
}
