import FutureLib
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3)))
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
