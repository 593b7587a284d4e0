import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamAdaptersTests {
    /// A callback API that reports several times: the kind `FutureStream(capacity:method:)` wraps.
    final class Sensor: Sendable {
        private let callbacks = Locked<[@Sendable (Int?, (any Error)?) -> Void]>([])
        let stops = Counter()

        func startUpdates(_ callback: @escaping @Sendable (Int?, (any Error)?) -> Void) {
            callbacks.withLock { $0.append(callback) }
        }

        func report(_ value: Int?, _ error: (any Error)? = nil) {
            for callback in callbacks.value { callback(value, error) }
        }
    }

    @Test func `each call of the callback adds a result`() async {
        let sensor = Sensor()
        let stream = FutureStream(capacity: 10, method: sensor.startUpdates)
        sensor.report(1)
        sensor.report(nil, TestFailure(code: 2))
        sensor.report(nil)
        sensor.report(3)
        let recorder = StreamRecorder<Int>().record(stream)
        #expect(recorder.values == [1, 3])
        #expect(recorder.errors.count == 2)
        #expect((recorder.errors.last as? FutureError) == .noSuchElement)
    }

    @Test func `the token finishes the stream and stops the updates`() async {
        let sensor = Sensor()
        let request = CancellationRequest()
        let stream = FutureStream<Int>(capacity: 10, cancellationToken: request.token) { callback, token in
            sensor.startUpdates(callback)
            token.onCancel { sensor.stops.increment() }
        }
        sensor.report(1)
        request.cancel()
        sensor.report(2)
        #expect(stream.isFinished)
        #expect(sensor.stops.value == 1)
        let recorder = StreamRecorder<Int>().record(stream)
        #expect(recorder.values == [1])
        #expect(recorder.errors.last is CancellationError)
    }

    @Test func `an already cancelled token never starts the updates`() async {
        let started = Counter()
        let stream = FutureStream<Int>(capacity: 1, cancellationToken: .cancelled) {
            (_: @escaping @Sendable (Result<Int, any Error>) -> Void) in started.increment()
        }
        #expect(started.value == 0)
        #expect(stream.isFinished)
    }

    @Test func `Result, value-only and error-only callbacks`() async {
        let resultCallback = Locked<(@Sendable (Result<Int, any Error>) -> Void)?>(nil)
        let results = FutureStream<Int>(capacity: 5) { callback in resultCallback.withLock { $0 = callback } }
        resultCallback.value?(.success(1))
        resultCallback.value?(.failure(TestFailure()))
        #expect(StreamRecorder<Int>().record(results).entries.count == 2)

        let valueCallback = Locked<(@Sendable (Int) -> Void)?>(nil)
        let values = FutureStream<Int>(capacity: 5) { callback in valueCallback.withLock { $0 = callback } }
        valueCallback.value?(7)
        #expect(StreamRecorder<Int>().record(values).values == [7])

        let errorCallback = Locked<(@Sendable ((any Error)?) -> Void)?>(nil)
        let saves = FutureStream<Void>(capacity: 5) { callback in errorCallback.withLock { $0 = callback } }
        errorCallback.value?(nil)
        errorCallback.value?(TestFailure())
        let recorder = StreamRecorder<Void>().record(saves)
        #expect(recorder.values.count == 1 && recorder.errors.count == 1)
    }

    @Test func `Result- and Error?-shaped functions passed by name infer the value type`() async {
        // Each `let` is typed from its initializer alone: the value-only form is disfavored.
        func totals(_ callback: @escaping @Sendable (Result<Int, any Error>) -> Void) {
            callback(.success(1))
            callback(.failure(TestFailure()))
        }
        func saves(_ callback: @escaping @Sendable ((any Error)?) -> Void) {
            callback(nil)
            callback(TestFailure())
        }
        func levels(_ callback: @escaping @Sendable (Double) -> Void) { callback(0.5) }
        // SimpleFutures' examples call back with a non-optional value and an optional error.
        func pairs(_ callback: @escaping @Sendable (Int, (any Error)?) -> Void) {
            callback(2, nil)
            callback(0, TestFailure())
        }
        let totalStream = FutureStream(capacity: 5, method: totals)
        let saveStream = FutureStream(capacity: 5, method: saves)
        let levelStream = FutureStream(capacity: 5, method: levels)
        let pairStream = FutureStream(capacity: 5, method: pairs)
        let _: FutureStream<Int> = totalStream
        let _: FutureStream<Void> = saveStream
        let _: FutureStream<Double> = levelStream
        let _: FutureStream<Int> = pairStream
        let totalsSeen = StreamRecorder<Int>().record(totalStream)
        #expect(totalsSeen.values == [1] && totalsSeen.errors.count == 1)
        let savesSeen = StreamRecorder<Void>().record(saveStream)
        #expect(savesSeen.values.count == 1 && savesSeen.errors.count == 1)
        #expect(StreamRecorder<Double>().record(levelStream).values == [0.5])
        let pairsSeen = StreamRecorder<Int>().record(pairStream)
        #expect(pairsSeen.values == [2] && pairsSeen.errors.count == 1)
    }

    // MARK: - A stream nobody can publish to any more

    @Test func `a loop over a stream whose API dropped its callback ends instead of waiting forever`() async throws {
        // The API calls back twice and drops the callback: nothing holds the stream but the loop's
        // iterator, which does not keep it alive. Its deallocation finishes it, which ends the loop.
        var seen: [Int] = []
        let callsTwiceThenDrops: (@escaping @Sendable (Int?, (any Error)?) -> Void) -> Void = { callback in
            callback(1, nil)
            callback(2, nil)
        }
        for try await value in FutureStream<Int>(capacity: 4, method: callsTwiceThenDrops).values {
            seen.append(value)
        }
        #expect(seen == [1, 2])
    }

    @Test func `callbacks on a stream that is deallocated unfinished get its end`() async {
        let ended = Signal()
        do {
            let dropsItsCallback: (@escaping @Sendable (Int?, (any Error)?) -> Void) -> Void = { _ in }
            let stream = FutureStream<Int>(capacity: 1, method: dropsItsCallback)
            stream.onFinish { ended.fire() }
        }
        #expect(await onDedicatedThread { ended.wait() })
    }
}
