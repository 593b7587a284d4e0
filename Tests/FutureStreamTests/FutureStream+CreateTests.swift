import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamCreateTests {
    // MARK: - A stream that starts with its one result

    @Test func `FutureStream(value:) holds the value and has finished`() async {
        let stream = FutureStream(value: 7)
        #expect(stream.isFinished)
        #expect(stream.count == 1)
        #expect(stream.capacity == 1)
        let recorder = StreamRecorder<Int>().record(stream)
        await recorder.finished()
        #expect(recorder.values == [7])
        #expect(recorder.errors.isEmpty)
    }

    @Test func `FutureStream(error:) holds the error and has finished`() async {
        let stream = FutureStream<Int>(error: TestFailure(code: 4), capacity: 3)
        #expect(stream.isFinished)
        #expect(stream.capacity == 3)
        let recorder = StreamRecorder<Int>().record(stream)
        await recorder.finished()
        #expect(recorder.values.isEmpty)
        #expect(recorder.errors.compactMap { ($0 as? TestFailure)?.code } == [4])
    }

    @Test func `with capacity 0 the one result is not kept`() async {
        let stream = FutureStream(value: 7, capacity: 0)
        #expect(stream.count == 0)
        let recorder = StreamRecorder<Int>().record(stream)
        await recorder.finished()
        #expect(recorder.entries.isEmpty)
    }

    // MARK: - A stream produced by work on a context

    @Test func `the work runs on its context and the stream gets its value, then the end`() async {
        let queue = DispatchQueue(label: "stream-work")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 1)
        let stream = FutureStream(on: queue) { DispatchQueue.getSpecific(key: key) ?? 0 }
        let recorder = StreamRecorder<Int>().record(stream)
        await recorder.finished()
        #expect(recorder.values == [1])
        #expect(stream.count == 1)
    }

    @Test func `a throwing work gives a stream holding its error`() async {
        let stream = FutureStream<Int>(capacity: 2) { throw TestFailure(code: 5) }
        let recorder = StreamRecorder<Int>().record(stream)
        await recorder.finished()
        #expect(recorder.errors.compactMap { ($0 as? TestFailure)?.code } == [5])
    }

    @Test func `an already cancelled token skips the work and gives a finished stream holding CancellationError`() {
        let calls = Counter()
        let stream = FutureStream(on: .synchronous, cancellationToken: .cancelled) { calls.increment() }
        #expect(stream.isFinished)
        #expect(calls.value == 0)
        let errors = Locked<[any Error]>([])
        // The stream's own CancellationError: `policy: .allErrors`, as for a future's `onFailure`.
        stream.onFailure(on: .synchronous, policy: .allErrors) { error in errors.withLock { $0.append(error) } }
        #expect(errors.value.count == 1)
        #expect(errors.value.first is CancellationError)
    }

    @Test func `a token cancelled while the work runs finishes the stream at once and drops the work's value`() async {
        let request = CancellationRequest()
        let started = Promise<Void>()
        let release = DispatchSemaphore(value: 0)
        let context = ThreadPerJobReportingEnd()
        let stream = FutureStream(on: context, cancellationToken: request.token) {
            started.fulfill(())
            release.wait()  // a thread of its own: the test never blocks the cooperative pool
            return 1
        }
        let recorder = StreamRecorder<Int>().record(stream)
        try? await started.future.value()
        request.cancel()
        #expect(recorder.isFinished)
        release.signal()
        try? await context.ended.future.value()  // the work returned and its value was offered
        await recorder.finished()
        #expect(recorder.values.isEmpty)
        #expect(recorder.errors.count == 1)
        #expect(recorder.errors.first is CancellationError)
    }

    // MARK: - count and StreamPromise()

    @Test func `count is how many results the stream keeps now, at most its capacity`() {
        let promise = StreamPromise<Int>(capacity: 2)
        #expect(promise.stream.count == 0)
        promise.fulfill(1)
        #expect(promise.stream.count == 1)
        promise.reject(TestFailure())
        promise.fulfill(3)
        #expect(promise.stream.count == 2)
        promise.finish()
        #expect(promise.stream.count == 2)
    }

    @Test func `StreamPromise() keeps every result for late subscribers`() async {
        let promise = StreamPromise<Int>()
        #expect(promise.stream.capacity == .max)
        for value in 0..<1_000 { promise.fulfill(value) }
        promise.finish()
        #expect(promise.stream.count == 1_000)
        let recorder = StreamRecorder<Int>().record(promise.stream)
        await recorder.finished()
        #expect(recorder.values == Array(0..<1_000))
    }
}

/// Runs each job on a thread of its own, and fulfills `ended` once a job has returned.
private struct ThreadPerJobReportingEnd: ExecutionContext {
    let ended = Promise<Void>()

    func execute(_ work: @escaping @Sendable () -> Void) {
        ThreadPerJob().execute {
            work()
            ended.fulfill(())
        }
    }
}
