import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// The examples of Documentation/Streams.md, so that they compile and do what the guide says.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamGuideTests {
    enum SensorError: Error {
        case unavailable
    }

    /// The callback API of the "Wrapping callback APIs" example.
    final class Sensor: Sendable {
        private let callback = Locked<(@Sendable (Int?, (any Error)?) -> Void)?>(nil)
        let stops = Counter()

        func startUpdates(_ callback: @escaping @Sendable (Int?, (any Error)?) -> Void) {
            self.callback.withLock { $0 = callback }
        }

        func stopUpdates() {
            stops.increment()
            callback.withLock { $0 = nil }
        }

        func report(_ value: Int) {
            callback.value?(value, nil)
        }
    }

    @Test func `Writing and reading`() async {
        let readings = StreamPromise<Double>(capacity: 10)  // keeps the last 10 for late subscribers

        readings.stream.onSuccess(on: .synchronous) { celsius in print("\(celsius) °C") }
        readings.stream.onFailure(on: .synchronous) { error in print("sensor: \(error)") }

        readings.fulfill(21.5)
        readings.reject(SensorError.unavailable)  // an error is a result; the stream goes on
        readings.fulfill(22.0)
        readings.finish()  // the end: later results are ignored

        #expect(readings.stream.isFinished)
    }

    @Test func `Capacity: what a late subscriber sees`() async {
        let progress = StreamPromise<Int>(capacity: 2)
        for percent in [10, 20, 30] { progress.fulfill(percent) }

        let seen = Locked<[Int]>([])
        progress.stream.onSuccess(on: .synchronous) { percent in seen.withLock { $0.append(percent) } }
        #expect(seen.value == [20, 30])
    }

    @Test func `Streams that hold one result`() async {
        let cached = FutureStream(value: 21.5)
        let calibrated = FutureStream<Double>(on: .default) { 21.5 - 0.3 }
        let seen = Locked<[Double]>([])
        cached.onSuccess(on: .synchronous) { value in seen.withLock { $0.append(value) } }
        #expect(seen.value == [21.5])
        #expect(cached.isFinished && cached.count == 1)
        let done = Promise<Void>()
        calibrated.onFinish(on: .synchronous) { done.fulfill(()) }
        try? await done.future.value()
        #expect(calibrated.count == 1)
    }

    @Test func `Subscribers: a token unsubscribes`() async {
        let updates = StreamPromise<Int>(capacity: 0)
        let stop = CancellationRequest()
        let seen = Locked<[Int]>([])
        updates.stream.onSuccess(on: .synchronous, cancellationToken: stop.token) { value in
            seen.withLock { $0.append(value) }
        }
        updates.fulfill(1)
        stop.cancel()  // unsubscribed and released
        updates.fulfill(2)
        #expect(seen.value == [1])
    }

    @Test func `Combinators`() async {
        let temperatures = StreamPromise<Double>(capacity: 5)
        let fahrenheit = temperatures.stream
            .filter(on: .synchronous) { $0 > -273.15 }
            .map(on: .synchronous) { $0 * 9 / 5 + 32 }
        let seen = Locked<[Double]>([])
        fahrenheit.onSuccess(on: .synchronous) { value in seen.withLock { $0.append(value) } }
        temperatures.fulfill(100)
        temperatures.fulfill(-300)  // filtered out
        temperatures.fulfill(0)
        #expect(seen.value == [212, 32])
    }

    @Test func `Async/await: values`() async throws {
        let numbers = StreamPromise<Int>(capacity: 10)
        for number in 1...3 { numbers.fulfill(number) }
        numbers.finish()

        var sum = 0
        for try await number in numbers.stream.values { sum += number }
        #expect(sum == 6)
    }

    @Test func `Async/await: a stream from an AsyncSequence`() async {
        let (ticks, continuation) = AsyncStream.makeStream(of: Int.self)
        let stream = FutureStream(capacity: 10, ticks)
        continuation.yield(1)
        continuation.yield(2)
        continuation.finish()  // the stream finishes after 1 and 2

        await stream.finished()
        #expect(StreamRecorder<Int>().record(stream).values == [1, 2])
    }

    @Test func `Wrapping callback APIs`() async {
        let sensor = Sensor()
        let stop = CancellationRequest()
        let readings = FutureStream<Int>(capacity: 5, cancellationToken: stop.token) { callback, token in
            sensor.startUpdates(callback)
            token.onCancel { sensor.stopUpdates() }
        }
        sensor.report(42)
        stop.cancel()  // stops the sensor; the stream finishes

        #expect(sensor.stops.value == 1)
        #expect(readings.isFinished)
        #expect(StreamRecorder<Int>().record(readings).values == [42])
    }

    // MARK: - Operator reference

    @Test func `the search example looks up only the query that stayed for 300 ms`() {
        let clock = ManualClock()
        let keystrokes = StreamPromise<String>(capacity: 0)
        let suggestions = keystrokes.stream
            .map(on: .synchronous) { $0.lowercased() }
            .removeDuplicates()
            .debounce(for: .milliseconds(300), clock: clock)
            .flatMapLatest(on: .synchronous) { query, token -> Future<[String]> in
                Future(on: .synchronous, cancellationToken: token) { [query, query + "s"] }
            }
        let seen = Locked<[[String]]>([])
        suggestions.onSuccess(on: .synchronous) { value in seen.withLock { $0.append(value) } }
        keystrokes.fulfill("swi")
        keystrokes.fulfill("Swift")
        clock.advance(by: .milliseconds(300))
        #expect(seen.value == [["swift", "swifts"]])
    }

    @Test func `the heartbeat example times out only once the heartbeats stop`() {
        let clock = ManualClock()
        let stop = CancellationRequest()
        let heartbeats = StreamPromise<Int>(capacity: 0)
        let watched = heartbeats.stream.timeout(after: .seconds(30), clock: clock)
        let failures = Locked<[String]>([])
        watched.onFailure(on: .synchronous) { error in failures.withLock { $0.append("\(error)") } }
        let ticks = FutureStream<Int>.interval(.seconds(10), clock: clock, cancellationToken: stop.token)
        ticks.onSuccess(on: .synchronous) { tick in heartbeats.fulfill(tick) }
        clock.advance(by: .seconds(60))
        #expect(failures.value.isEmpty)
        stop.cancel()
        clock.advance(by: .seconds(30))
        #expect(failures.value.count == 1)
        #expect(watched.isFinished)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `the average example averages the collected samples`() async throws {
        let samples = StreamPromise<Int>(capacity: 0)
        let average: Future<Double> = samples.stream.collect().map(on: .synchronous) { values in
            values.isEmpty ? 0 : Double(values.reduce(0, +)) / Double(values.count)
        }
        for sample in [3, 4, 5] { samples.fulfill(sample) }
        samples.finish()
        #expect(try await average.value() == 4)
    }
}
