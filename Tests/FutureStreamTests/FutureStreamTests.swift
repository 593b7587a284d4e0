import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamTests {
    @Test func `a result evicted from the replay buffer is released outside the stream's lock`() {
        // Its `deinit` reads the stream (its lock): released inside the lock, a deadlock. Release
        // builds (`make test-release`) are the ones that could release it there.
        let promise = StreamPromise<ReadsStreamOnDeinit>(capacity: 1)
        let released = Counter()
        promise.fulfill(ReadsStreamOnDeinit(promise.stream, released))
        promise.fulfill(ReadsStreamOnDeinit(promise.stream, released))  // evicts the first
        #expect(released.value == 1)
        promise.finish()
    }

    // MARK: - Order

    @Test func `a subscriber gets every result in order`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let recorder = StreamRecorder<Int>().record(promise.stream)
        for value in 0..<100 { promise.fulfill(value) }
        promise.finish()
        await recorder.finished()
        #expect(recorder.values == Array(0..<100))
    }

    @Test(arguments: [false, true])
    func `several subscribers each see every result in order on a serial or concurrent context`(serial: Bool) async {
        let promise = StreamPromise<Int>(capacity: 0)
        let queue = DispatchQueue(label: "stream-order")
        let recorders = (0..<4).map { _ in StreamRecorder<Int>() }
        for recorder in recorders {
            if serial {
                recorder.record(promise.stream, on: queue)
            } else {
                recorder.record(promise.stream, on: .default)
            }
        }
        for value in 0..<1_000 { promise.fulfill(value) }
        promise.finish()
        for recorder in recorders {
            await recorder.finished()
            #expect(recorder.values == Array(0..<1_000))
        }
    }

    @Test func `a handler never runs concurrently with itself on a concurrent context`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let running = Counter()
        let overlaps = Counter()
        let done = Promise<Void>()
        promise.stream.onSuccess(on: .default) { value in
            if running.increment() > 1 { overlaps.increment() }
            for _ in 0..<100 { blackHole(value) }
            running.decrement()
            if value == 499 { done.fulfill(()) }
        }
        await onDedicatedThread { for value in 0..<500 { promise.fulfill(value) } }
        _ = try? await done.future.value()
        #expect(overlaps.value == 0)
    }

    @Test func `errors are results: the stream goes on after one`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let recorder = StreamRecorder<Int>().record(promise.stream)
        let failures = Locked<[Int]>([])
        promise.stream.onFailure(on: .synchronous) { error in
            failures.withLock { $0.append((error as? TestFailure)?.code ?? -1) }
        }
        let successes = Locked<[Int]>([])
        promise.stream.onSuccess(on: .synchronous) { value in successes.withLock { $0.append(value) } }
        promise.fulfill(1)
        promise.reject(TestFailure(code: 7))
        promise.resolve(.success(2))
        promise.finish()
        await recorder.finished()
        #expect(recorder.values == [1, 2])
        #expect(recorder.errors.compactMap { ($0 as? TestFailure)?.code } == [7])
        #expect(failures.value == [7])
        #expect(successes.value == [1, 2])
    }

    // MARK: - Capacity and late subscribers

    @Test func `a late subscriber gets the last capacity results, oldest first, then new ones`() async {
        let promise = StreamPromise<Int>(capacity: 3)
        for value in 1...5 { promise.fulfill(value) }
        let recorder = StreamRecorder<Int>().record(promise.stream)
        #expect(recorder.values == [3, 4, 5])
        promise.fulfill(6)
        promise.finish()
        await recorder.finished()
        #expect(recorder.values == [3, 4, 5, 6])
    }

    @Test func `capacity zero keeps nothing for late subscribers`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        promise.fulfill(1)
        let recorder = StreamRecorder<Int>().record(promise.stream)
        promise.fulfill(2)
        promise.finish()
        await recorder.finished()
        #expect(recorder.values == [2])
    }

    @Test func `capacity max keeps everything`() async {
        let promise = StreamPromise<Int>(capacity: .max)
        for value in 0..<1_000 { promise.fulfill(value) }
        promise.finish()
        let recorder = StreamRecorder<Int>().record(promise.stream)
        await recorder.finished()
        #expect(recorder.values == Array(0..<1_000))
    }

    @Test func `evicted results are released`() async {
        let counter = DeinitCounter()
        let promise = StreamPromise<Tracked>(capacity: 2)
        for _ in 0..<10 { promise.fulfill(counter.make()) }
        #expect(counter.deallocated == 8)
    }

    // MARK: - Finish

    @Test func `finish delivers the pending results, then the end, and ignores later results`() async {
        let promise = StreamPromise<Int>(capacity: 5)
        let queue = DispatchQueue(label: "stream-finish")
        let recorder = StreamRecorder<Int>().record(promise.stream, on: queue)
        promise.fulfill(1)
        promise.fulfill(2)
        promise.finish()
        promise.fulfill(3)
        promise.finish()
        await recorder.finished()
        #expect(recorder.values == [1, 2])
        #expect(promise.stream.isFinished)
    }

    @Test func `a subscriber after the end gets the kept results and the end at once`() async {
        let promise = StreamPromise<Int>(capacity: 2)
        for value in 1...3 { promise.fulfill(value) }
        promise.finish()
        let recorder = StreamRecorder<Int>().record(promise.stream)
        #expect(recorder.values == [2, 3])
        #expect(recorder.isFinished)
    }

    @Test func `onFinish on a serial context runs after the results of earlier subscribers there`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let queue = DispatchQueue(label: "stream-onFinish")
        let log = Locked<[String]>([])
        queue.suspend()
        promise.stream.onSuccess(on: queue) { value in log.withLock { $0.append("\(value)") } }
        let done = Promise<Void>()
        promise.stream.onFinish(on: queue) {
            log.withLock { $0.append("end") }
            done.fulfill(())
        }
        promise.fulfill(1)
        promise.fulfill(2)
        promise.finish()
        queue.resume()
        _ = try? await done.future.value()
        #expect(log.value == ["1", "2", "end"])
    }

    @Test func `dropping the promise finishes the stream and releases the handlers`() async {
        let counter = DeinitCounter()
        var promise: StreamPromise<Int>? = StreamPromise(capacity: 1)
        let stream = promise!.stream
        let tracked = counter.make()
        stream.onSuccess(on: .synchronous) { _ in tracked.touch() }
        let recorder = StreamRecorder<Int>().record(stream)
        promise?.fulfill(1)
        promise = nil
        await recorder.finished()
        #expect(stream.isFinished)
        #expect(recorder.values == [1])
        _ = consume tracked
        #expect(counter.deallocated == 1)
    }

    // MARK: - Unsubscribing by token

    @Test func `a cancelled token unsubscribes the handler, which gets one CancellationError`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let recorder = StreamRecorder<Int>().record(promise.stream, cancellationToken: request.token)
        promise.fulfill(1)
        request.cancel()
        promise.fulfill(2)
        #expect(recorder.values == [1])
        #expect(recorder.errors.count == 1)
        #expect(recorder.errors.first is CancellationError)
    }

    @Test func `a cancelled token releases the handler`() async {
        let counter = DeinitCounter()
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        do {
            let tracked = counter.make()
            promise.stream.onSuccess(on: .synchronous, cancellationToken: request.token) { _ in tracked.touch() }
        }
        #expect(counter.deallocated == 0)
        request.cancel()
        #expect(counter.deallocated == 1)
        promise.fulfill(1)
    }

    @Test func `an already cancelled token subscribes nothing; onSuccess is never called`() async {
        let promise = StreamPromise<Int>(capacity: 3)
        promise.fulfill(1)
        let successes = Counter()
        let failures = Locked<[any Error]>([])
        promise.stream.onSuccess(on: .synchronous, cancellationToken: .cancelled) { _ in successes.increment() }
        promise.stream.onFailure(on: .synchronous, cancellationToken: .cancelled) { e in
            failures.withLock { $0.append(e) }
        }
        promise.fulfill(2)
        #expect(successes.value == 0)
        #expect(failures.value.count == 1 && failures.value.first is CancellationError)
    }

    @Test func `results queued for a subscriber are dropped when its token is cancelled`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let queue = DispatchQueue(label: "stream-drop")
        let request = CancellationRequest()
        let recorder = StreamRecorder<Int>().record(promise.stream, on: queue, cancellationToken: request.token)
        queue.suspend()
        promise.fulfill(1)
        promise.fulfill(2)
        request.cancel()
        queue.resume()
        promise.finish()
        await recorder.finished()
        #expect(recorder.values.isEmpty)
        #expect(recorder.errors.count == 1 && recorder.errors.first is CancellationError)
    }

    @Test func `cancelling one subscriber leaves the others subscribed`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let cancelled = StreamRecorder<Int>().record(promise.stream, cancellationToken: request.token)
        let other = StreamRecorder<Int>().record(promise.stream)
        promise.fulfill(1)
        request.cancel()
        promise.fulfill(2)
        promise.finish()
        await other.finished()
        #expect(cancelled.values == [1])
        #expect(other.values == [1, 2])
    }

    @Test func `a token cancelled inside the handler stops the rest of the batch`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let queue = DispatchQueue(label: "stream-self-cancel")
        let request = CancellationRequest()
        let seen = Locked<[Int]>([])
        queue.suspend()
        promise.stream.onSuccess(on: queue, cancellationToken: request.token) { value in
            seen.withLock { $0.append(value) }
            if value == 2 { request.cancel() }
        }
        for value in 1...5 { promise.fulfill(value) }
        queue.resume()
        promise.finish()
        await promise.stream.finished()
        queue.sync {}
        #expect(seen.value == [1, 2])
    }

    // MARK: - resolve(with:)

    @Test func `resolve(with: future) adds the future's result`() async {
        let promise = StreamPromise<Int>(capacity: 5)
        let source = Promise<Int>()
        promise.resolve(with: source.future)
        promise.resolve(with: Future(error: TestFailure(code: 2)))
        source.fulfill(1)
        promise.finish()
        let recorder = StreamRecorder<Int>().record(promise.stream)
        #expect(recorder.entries.count == 2)
        #expect(recorder.values == [1])
    }

    @Test func `resolve(with: future) with a cancelled token adds nothing`() async {
        let promise = StreamPromise<Int>(capacity: 5)
        let source = Promise<Int>()
        let request = CancellationRequest()
        promise.resolve(with: source.future, cancellationToken: request.token)
        request.cancel()
        source.fulfill(1)
        promise.finish()
        let recorder = StreamRecorder<Int>().record(promise.stream)
        #expect(recorder.entries.isEmpty)
    }

    @Test func `resolve(with: stream) forwards every result until its token is cancelled`() async {
        let merged = StreamPromise<Int>(capacity: 10)
        let first = StreamPromise<Int>(capacity: 1)
        let second = StreamPromise<Int>(capacity: 1)
        let request = CancellationRequest()
        first.fulfill(0)
        merged.resolve(with: first.stream)
        merged.resolve(with: second.stream, cancellationToken: request.token)
        first.fulfill(1)
        second.fulfill(10)
        request.cancel()
        second.fulfill(11)
        first.finish()
        #expect(!merged.stream.isFinished)
        first.fulfill(2)
        merged.finish()
        let recorder = StreamRecorder<Int>().record(merged.stream)
        #expect(recorder.values == [0, 1, 10])
    }
}

/// Keeps the optimizer from dropping a computation.
@inline(never)
func blackHole<T>(_ value: T) {}

/// A value whose `deinit` reads its stream, so takes the stream's lock.
private final class ReadsStreamOnDeinit: Sendable {
    weak let stream: FutureStream<ReadsStreamOnDeinit>?  // weak: the stream keeps the value
    let released: Counter

    init(_ stream: FutureStream<ReadsStreamOnDeinit>, _ released: Counter) {
        self.stream = stream
        self.released = released
    }

    deinit {
        _ = stream?.subscriberCount
        released.increment()
    }
}
