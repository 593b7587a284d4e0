import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamRecoverTests {
    /// A stream of `results` that has finished.
    static func finished(_ results: [Result<Int, any Error>]) -> FutureStream<Int> {
        let promise = StreamPromise<Int>()
        for result in results { promise.resolve(result) }
        promise.finish()
        return promise.stream
    }

    static func codes(_ errors: [any Error]) -> [Int] {
        errors.map { ($0 as? TestFailure)?.code ?? -1 }
    }

    // MARK: - ErrorPolicy: the futures' defaults

    @Test func `recover, recoverWith and mapError pass a CancellationError on by default, as futures do`() async {
        let source = Self.finished([.failure(CancellationError()), .failure(TestFailure(code: 1))])
        let recovered = StreamRecorder<Int>().record(source.recover(on: .synchronous) { _ in 0 })
        let awaited = StreamRecorder<Int>().record(source.recoverWith(on: .synchronous) { _ in Future(value: 0) })
        let merged = StreamRecorder<Int>().record(
            source.recoverWith(on: .synchronous) { _ -> FutureStream<Int> in FutureStream(value: 0) }
        )
        let mapped = StreamRecorder<Int>().record(source.mapError(on: .synchronous) { _ in TestFailure(code: 9) })
        for recorder in [recovered, awaited, merged] {
            await recorder.finished()
            #expect(recorder.errors.count == 1 && recorder.errors.first is CancellationError)
            #expect(recorder.values == [0])
        }
        await mapped.finished()
        #expect(mapped.errors.first is CancellationError)
        #expect(Self.codes(Array(mapped.errors.dropFirst())) == [9])
    }

    @Test func `policy allErrors hands a CancellationError to recover, recoverWith and mapError`() async {
        let source = Self.finished([.failure(CancellationError())])
        let recovered = StreamRecorder<Int>().record(source.recover(on: .synchronous, policy: .allErrors) { _ in 0 })
        let awaited = StreamRecorder<Int>().record(
            source.recoverWith(on: .synchronous, policy: .allErrors) { _ in Future(value: 0) }
        )
        let mapped = StreamRecorder<Int>().record(
            source.mapError(on: .synchronous, policy: .allErrors) { _ in TestFailure(code: 9) }
        )
        await recovered.finished()
        await awaited.finished()
        await mapped.finished()
        #expect(recovered.values == [0] && recovered.errors.isEmpty)
        #expect(awaited.values == [0] && awaited.errors.isEmpty)
        #expect(Self.codes(mapped.errors) == [9])
    }

    @Test func `onFailure skips the stream's CancellationError by default; the token's own still reaches it`() async {
        let source = Self.finished([.failure(CancellationError()), .failure(TestFailure(code: 1))])
        let byDefault = Locked<[any Error]>([])
        let all = Locked<[any Error]>([])
        source.onFailure(on: .synchronous) { error in byDefault.withLock { $0.append(error) } }
        source.onFailure(on: .synchronous, policy: .allErrors) { error in all.withLock { $0.append(error) } }
        #expect(Self.codes(byDefault.value) == [1])
        #expect(all.value.count == 2 && all.value.first is CancellationError)
        let own = Locked<[any Error]>([])
        StreamPromise<Int>().stream.onFailure(on: .synchronous, cancellationToken: .cancelled) { error in
            own.withLock { $0.append(error) }
        }
        #expect(own.value.count == 1 && own.value.first is CancellationError)
    }

    @Test func `Future recoverWith a stream passes a CancellationError on by default`() async {
        let passed = StreamRecorder<Int>().record(
            Future<Int>(error: CancellationError()).recoverWith(capacity: 1) { _ in FutureStream(value: 0) }
        )
        let recovered = StreamRecorder<Int>().record(
            Future<Int>(error: CancellationError()).recoverWith(capacity: 1, policy: .allErrors) { _ in
                FutureStream(value: 0)
            }
        )
        await passed.finished()
        await recovered.finished()
        #expect(passed.errors.count == 1 && passed.errors.first is CancellationError && passed.values.isEmpty)
        #expect(recovered.values == [0])
    }

    // MARK: - Async and actor forms

    @Test func `async recover runs in order and keeps the policy`() async {
        let source = Self.finished([
            .success(1), .failure(TestFailure(code: 2)), .failure(CancellationError()), .success(4),
        ])
        let recorder = StreamRecorder<Int>().record(
            source.recover { error in
                await Task.yield()
                return (error as? TestFailure)?.code ?? -1
            }
        )
        await recorder.finished()
        #expect(recorder.values == [1, 2, 4])
        #expect(recorder.errors.count == 1 && recorder.errors.first is CancellationError)
    }

    actor Fallbacks {
        var calls = 0
    }

    @Test func `recover on an actor is isolated to it`() async {
        let fallbacks = Fallbacks()
        let recorder = StreamRecorder<Int>().record(
            Self.finished([.failure(TestFailure(code: 1)), .success(2), .failure(TestFailure(code: 3))])
                .recover(on: fallbacks) { fallbacks, _ in
                    fallbacks.calls += 1
                    return fallbacks.calls * 10
                }
        )
        await recorder.finished()
        #expect(recorder.values == [10, 2, 20])
        #expect(await fallbacks.calls == 2)
    }

    @Test func `recoverWith on .mainActor calls its closure on the main actor and keeps the policy`() async {
        let source = Self.finished([.failure(TestFailure(code: 1)), .failure(CancellationError())])
        let awaited = StreamRecorder<Int>().record(
            source.recoverWith(on: .mainActor) { _ in
                MainActor.assertIsolated()
                return Future(value: 0)
            }
        )
        let merged = StreamRecorder<Int>().record(
            source.recoverWith(on: .mainActor) { _ -> FutureStream<Int> in
                MainActor.assertIsolated()
                return FutureStream(value: 0)
            }
        )
        for recorder in [awaited, merged] {
            await recorder.finished()
            #expect(recorder.values == [0])
            #expect(recorder.errors.count == 1 && recorder.errors.first is CancellationError)
        }
    }

    // MARK: - FutureStream.recoverWith { error -> FutureStream }

    @Test func `recoverWith a stream replaces each error with that stream's results`() async {
        let source = Self.finished([.success(1), .failure(TestFailure(code: 2)), .success(3)])
        let recovered = source.recoverWith { error -> FutureStream<Int> in
            let code = (error as? TestFailure)?.code ?? -1
            return Self.finished([.success(code * 10), .success(code * 100)])
        }
        let recorder = StreamRecorder<Int>().record(recovered)
        await recorder.finished()
        #expect(recorder.values.sorted() == [1, 3, 20, 200])
        #expect(recorder.errors.isEmpty)
    }

    @Test func `recoverWith a stream finishes only after the source and every recovery stream`() async {
        let source = StreamPromise<Int>(capacity: 0)
        let recovery = StreamPromise<Int>(capacity: 0)
        let recovered = source.stream.recoverWith(on: .synchronous) { _ in recovery.stream }
        let recorder = StreamRecorder<Int>().record(recovered)
        source.reject(TestFailure())
        source.finish()
        #expect(!recorder.isFinished)
        recovery.fulfill(5)
        recovery.finish()
        await recorder.finished()
        #expect(recorder.values == [5])
    }

    @Test func `recoverWith a stream passes on the error its closure throws`() async {
        let source = Self.finished([.failure(TestFailure(code: 1))])
        let recovered = source.recoverWith { error -> FutureStream<Int> in throw TestFailure(code: 9) }
        let recorder = StreamRecorder<Int>().record(recovered)
        await recorder.finished()
        #expect(Self.codes(recorder.errors) == [9])
    }

    @Test func `recoverWith a stream: a cancelled token finishes at once and unsubscribes the recovery stream`() async {
        let source = StreamPromise<Int>(capacity: 0)
        let recovery = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let recovered = source.stream.recoverWith(on: .synchronous, cancellationToken: request.token) { _ in
            recovery.stream
        }
        let recorder = StreamRecorder<Int>().record(recovered)
        source.reject(TestFailure())
        #expect(recovery.stream.subscriberCount == 1)
        request.cancel()
        #expect(recorder.isFinished)
        #expect(recorder.errors.last is CancellationError)
        #expect(recovery.stream.subscriberCount == 0)
        recovery.fulfill(1)
        #expect(recorder.values.isEmpty)
    }

    // MARK: - Future.recoverWith(capacity:) { error -> FutureStream }

    @Test func `Future recoverWith a stream: a value becomes a stream of that value`() async {
        let calls = Counter()
        let stream = Future(value: 3).recoverWith(capacity: 2) { _ -> FutureStream<Int> in
            calls.increment()
            return FutureStream(value: 0)
        }
        let recorder = StreamRecorder<Int>().record(stream)
        await recorder.finished()
        #expect(recorder.values == [3])
        #expect(calls.value == 0)
        #expect(stream.capacity == 2)
    }

    @Test func `Future recoverWith a stream: an error continues with the stream's results and its end`() async {
        let recovery = StreamPromise<Int>(capacity: 2)  // keeps both: the closure subscribes later, on another thread
        recovery.fulfill(1)
        let source = Promise<Int>()
        let stream = source.future.recoverWith(capacity: 4, on: .synchronous) { _ in recovery.stream }
        let recorder = StreamRecorder<Int>().record(stream)
        source.reject(TestFailure())
        recovery.fulfill(2)
        #expect(!recorder.isFinished)
        recovery.finish()
        await recorder.finished()
        #expect(recorder.values == [1, 2])
        #expect(recorder.errors.isEmpty)
    }

    @Test func `Future recoverWith a stream passes on the error its closure throws`() async {
        let stream = Future<Int>(error: TestFailure(code: 1)).recoverWith(capacity: 1) { _ -> FutureStream<Int> in
            throw TestFailure(code: 8)
        }
        let recorder = StreamRecorder<Int>().record(stream)
        await recorder.finished()
        #expect(Self.codes(recorder.errors) == [8])
    }

    @Test func `Future recoverWith a stream: a cancelled token finishes at once without calling the closure`() async {
        let source = Promise<Int>()
        let request = CancellationRequest()
        let calls = Counter()
        let stream = source.future.recoverWith(capacity: 1, cancellationToken: request.token) { _ in
            calls.increment()
            return FutureStream(value: 0)
        }
        let recorder = StreamRecorder<Int>().record(stream)
        request.cancel()
        #expect(recorder.isFinished)
        #expect(recorder.errors.count == 1)
        #expect(recorder.errors.first is CancellationError)
        source.reject(TestFailure())
        #expect(calls.value == 0)
    }
}

// MARK: - On the main actor

extension FutureStreamRecoverTests {
    @Test func `stream recover on .mainActor runs its closure on the main actor`() async throws {
        func check() { MainActor.assertIsolated() }
        let promise = StreamPromise<Int>()
        let recovered = promise.stream.recover(on: .mainActor) { _ in
            check()
            return -1
        }
        let values = Locked<[Int]>([])
        let finished = Promise<Void>()
        recovered.onSuccess(on: .synchronous) { value in values.withLock { $0.append(value) } }
        recovered.onFinish(on: .synchronous) { finished.fulfill(()) }
        promise.fulfill(1)
        promise.reject(SampleError())
        promise.finish()
        try await finished.future.value()
        #expect(values.value == [1, -1])
    }
}
