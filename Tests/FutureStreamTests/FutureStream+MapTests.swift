import Dispatch
import FutureLib
import FutureTestSupport
import TestCombinators
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamMapTests {
    /// A finished stream of `values` (and `TestFailure(code: 9)` after the value 9 if asked).
    static func stream(_ values: [Int], failingAfterNine: Bool = false) -> FutureStream<Int> {
        let promise = StreamPromise<Int>(capacity: .max)
        for value in values {
            promise.fulfill(value)
            if failingAfterNine, value == 9 { promise.reject(TestFailure(code: 9)) }
        }
        promise.finish()
        return promise.stream
    }

    static func recorded<T>(_ stream: FutureStream<T>) async -> StreamRecorder<T> {
        let recorder = StreamRecorder<T>().record(stream)
        await recorder.finished()
        return recorder
    }

    // MARK: - Each combinator

    @Test func `map transforms every value in order on a concurrent context`() async {
        let mapped = Self.stream(Array(0..<500)).map(on: .default) { $0 * 2 }
        #expect(await Self.recorded(mapped).values == (0..<500).map { $0 * 2 })
        #expect(mapped.capacity == .max)
    }

    @Test func `map passes errors through and turns a throw into an error result`() async {
        let mapped = Self.stream([1, 9, 2], failingAfterNine: true).map { value -> Int in
            if value == 2 { throw TestFailure(code: 2) }
            return value
        }
        let recorder = await Self.recorded(mapped)
        #expect(recorder.values == [1, 9])
        #expect(recorder.errors.compactMap { ($0 as? TestFailure)?.code } == [9, 2])
    }

    @Test func `filter skips the values that fail the test`() async {
        let filtered = Self.stream(Array(0..<10), failingAfterNine: true).filter { $0.isMultiple(of: 3) }
        let recorder = await Self.recorded(filtered)
        #expect(recorder.values == [0, 3, 6, 9])
        #expect(recorder.errors.count == 1)
    }

    @Test func `flatMap to a future streams the futures' results and finishes after the last one`() async {
        let promises = (0..<3).map { _ in Promise<Int>() }
        let source = StreamPromise<Int>(capacity: 0)
        let flat = source.stream.flatMap(on: .synchronous) { index in promises[index].future }
        let recorder = StreamRecorder<Int>().record(flat)
        for index in 0..<3 { source.fulfill(index) }
        source.finish()
        #expect(!recorder.isFinished)
        promises[2].fulfill(20)
        promises[0].reject(TestFailure(code: 1))
        promises[1].fulfill(10)
        await recorder.finished()
        #expect(recorder.values == [20, 10])
        #expect(recorder.errors.count == 1)
    }

    @Test func `flatMap to a stream merges the inner streams and finishes after all of them`() async {
        let inners = (0..<2).map { _ in StreamPromise<Int>(capacity: 1) }
        let source = StreamPromise<Int>(capacity: 0)
        let flat = source.stream.flatMap(on: .synchronous) { index -> FutureStream<Int> in inners[index].stream }
        let recorder = StreamRecorder<Int>().record(flat)
        inners[0].fulfill(1)
        source.fulfill(0)
        source.fulfill(1)
        inners[1].fulfill(2)
        inners[0].fulfill(3)
        source.finish()
        inners[0].finish()
        #expect(!recorder.isFinished)
        inners[1].finish()
        await recorder.finished()
        #expect(recorder.values == [1, 2, 3])
    }

    @Test func `recover turns errors into values`() async {
        let recovered = Self.stream([1, 9], failingAfterNine: true).recover { error in
            (error as? TestFailure)?.code ?? -1
        }
        #expect(await Self.recorded(recovered).values == [1, 9, 9])
    }

    @Test func `recoverWith replaces errors with the futures' results`() async {
        let recovered = Self.stream([1, 9], failingAfterNine: true).recoverWith { _ in Future(value: 42) }
        #expect(await Self.recorded(recovered).values == [1, 9, 42])
    }

    @Test func `mapError transforms errors`() async {
        let mapped = Self.stream([9], failingAfterNine: true).mapError { _ in TestFailure(code: 99) }
        let recorder = await Self.recorded(mapped)
        #expect(recorder.values == [9])
        #expect(recorder.errors.compactMap { ($0 as? TestFailure)?.code } == [99])
    }

    @Test func `andThen runs the side effect before passing each result on`() async {
        let seen = Locked<[Int]>([])
        let passed = Self.stream([1, 2, 3]).andThen(on: .default) { result in
            if case .success(let value) = result { seen.withLock { $0.append(value) } }
        }
        let recorder = await Self.recorded(passed)
        #expect(recorder.values == [1, 2, 3])
        #expect(seen.value == [1, 2, 3])
    }

    @Test func `Future flatMap to a stream forwards the inner stream`() async {
        let inner = StreamPromise<Int>(capacity: 2)
        inner.fulfill(1)
        let connection = Promise<Int>()
        let stream = connection.future.flatMap(capacity: 4) { _ in inner.stream }
        let recorder = StreamRecorder<Int>().record(stream)
        connection.fulfill(0)
        inner.fulfill(2)
        inner.finish()
        await recorder.finished()
        #expect(recorder.values == [1, 2])
        #expect(stream.capacity == 4)
    }

    @Test func `Future flatMap to a stream of a failed future holds the error and finishes`() async {
        let stream = Future<Int>(error: TestFailure(code: 3)).flatMap(capacity: 1) { _ in
            StreamPromise<Int>(capacity: 1).stream
        }
        let recorder = await Self.recorded(stream)
        #expect(recorder.errors.compactMap { ($0 as? TestFailure)?.code } == [3])
    }

    // MARK: - Tokens

    @Test(arguments: StreamCombinator.allCases)
    func `a cancelled token gives CancellationError and the end at once, and no more calls`(
        combinator: StreamCombinator
    ) async {
        let source = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let calls = Counter()
        let derived = combinator.apply(to: source.stream, cancellationToken: request.token) { calls.increment() }
        let recorder = StreamRecorder<Int>().record(derived)
        source.fulfill(1)
        source.reject(TestFailure())
        let callsBefore = calls.value
        request.cancel()
        #expect(recorder.isFinished)
        #expect(recorder.errors.last is CancellationError)
        source.fulfill(2)
        source.reject(TestFailure())
        #expect(calls.value == callsBefore)
        #expect(!source.stream.isFinished)
    }

    @Test(arguments: StreamCombinator.allCases)
    func `an already cancelled token gives a finished stream holding CancellationError`(
        combinator: StreamCombinator
    ) async {
        let source = StreamPromise<Int>(capacity: 1)
        source.fulfill(1)
        let calls = Counter()
        let derived = combinator.apply(to: source.stream, cancellationToken: .cancelled) { calls.increment() }
        let recorder = StreamRecorder<Int>().record(derived)
        #expect(recorder.isFinished)
        #expect(recorder.entries.count == 1 && recorder.errors.first is CancellationError)
        #expect(calls.value == 0)
    }

    @Test func `a combinator's subscription and token handler are released when the source finishes`() async {
        let source = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let counter = DeinitCounter()
        do {
            let tracked = counter.make()
            _ = source.stream.map(on: .synchronous, cancellationToken: request.token) { _ in tracked.touch() }
        }
        source.finish()
        #expect(counter.deallocated == 1)
    }

    // MARK: - Async and actor forms

    @Test func `async map awaits one value at a time, in order, and passes errors on`() async {
        let probe = OverlapProbe()
        let mapped = Self.stream(Array(0..<50), failingAfterNine: true).map { value in
            await probe.yieldInside()
            return value * 2
        }
        let recorder = await Self.recorded(mapped)
        #expect(recorder.values == (0..<50).map { $0 * 2 })
        #expect(recorder.errors.count == 1)
        #expect(probe.overlaps == 0)
    }

    @Test func `async map on .mainActor runs on the main actor; a throw becomes an error of the new stream`() async {
        let mapped = Self.stream([1, 2]).map(on: .mainActor) { value in
            MainActor.assertIsolated()
            await Task.yield()
            if value == 2 { throw TestFailure(code: 2) }
            return value
        }
        let recorder = await Self.recorded(mapped)
        #expect(recorder.values == [1])
        #expect((recorder.errors.first as? TestFailure)?.code == 2)
    }

    actor Rates {
        var rate = 3
    }

    @Test func `filter's async and actor forms keep what the synchronous form keeps, in order`() async {
        let isEven: @Sendable (Int) throws -> Bool = { value in
            if value == 7 { throw TestFailure(code: 7) }
            return value.isMultiple(of: 2)
        }
        let onContext = Self.stream(Array(0..<10)).filter { value in
            await Task.yield()
            return try isEven(value)
        }
        let onMainActor = Self.stream(Array(0..<10)).filter(on: .mainActor) { value in
            MainActor.assertIsolated()
            await Task.yield()
            return try isEven(value)
        }
        let onActor = Self.stream(Array(0..<10)).filter(on: Rates()) { rates, value in
            rates.assertIsolated()
            return try isEven(value)
        }
        for filtered in [onContext, onMainActor, onActor] {
            let recorder = await Self.recorded(filtered)
            #expect(recorder.values == [0, 2, 4, 6, 8])
            #expect((recorder.errors.first as? TestFailure)?.code == 7)
        }
    }

    @Test func `map on an actor is isolated to it`() async {
        let rates = Rates()
        let mapped = Self.stream([1, 2, 3]).map(on: rates) { rates, value in value * rates.rate }
        #expect(await Self.recorded(mapped).values == [3, 6, 9])
    }

    @Test func `async map: a cancelled token cancels the running task and finishes the new stream at once`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let started = Promise<Void>()
        let sawCancellation = Promise<Bool>()
        let mapped = promise.stream.map(cancellationToken: request.token) { value in
            started.fulfill(())
            while !Task.isCancelled { await Task.yield() }
            sawCancellation.fulfill(true)
            return value
        }
        let recorder = StreamRecorder<Int>().record(mapped)
        promise.fulfill(1)
        _ = try? await started.future.value()
        request.cancel()
        #expect(recorder.isFinished)
        #expect(recorder.errors.count == 1 && recorder.errors.first is CancellationError)
        #expect((try? await sawCancellation.future.value()) == true)
        #expect(recorder.values.isEmpty)
    }

    @Test func `flatMap on .mainActor calls its closure on the main actor, for a future and for a stream`() async {
        let toFutures = Self.stream([1, 2]).flatMap(on: .mainActor) { value in
            MainActor.assertIsolated()
            return Future(value: value * 10)
        }
        let toStreams = Self.stream([1, 2]).flatMap(on: .mainActor) { value -> FutureStream<Int> in
            MainActor.assertIsolated()
            return FutureStream(value: value * 100)
        }
        #expect(await Self.recorded(toFutures).values.sorted() == [10, 20])
        #expect(await Self.recorded(toStreams).values.sorted() == [100, 200])
    }
}

// MARK: - On the main actor

extension FutureStreamMapTests {
    /// `on: .mainActor` across the family.
    @Suite struct OnMainActor {
        @Test func `stream combinators on .mainActor run their closures on the main actor`() async throws {
            func check() { MainActor.assertIsolated() }
            let promise = StreamPromise<Int>()
            let mapped = promise.stream
                .map(on: .mainActor) {
                    check()
                    return $0 * 2
                }
                .filter(on: .mainActor) {
                    check()
                    return $0 > 0
                }
                .andThen(on: .mainActor) { _ in check() }
                .mapError(on: .mainActor) { _ in
                    check()
                    return TestFailure(code: 9)
                }
            let values = Locked<[Int]>([])
            let finished = Promise<Void>()
            mapped.onComplete(on: .mainActor) { result in
                check()
                values.withLock { $0.append((try? result.get()) ?? (result.testFailure?.code ?? -2)) }
            }
            mapped.onFinish(on: .mainActor) { finished.fulfill(()) }
            promise.fulfill(0)
            promise.fulfill(1)
            promise.reject(SampleError())
            promise.finish()
            try await finished.future.value()
            #expect(values.value == [2, 9])
        }
    }
}
