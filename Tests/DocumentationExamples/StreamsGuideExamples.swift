import FutureLib
import Synchronization
import TestSupport
import Testing

// Documentation/Streams.md, "Operator reference", "An empty stream, and one that never ends" and "Coming from Futura":
// the guide's functions, run, with what the guide says of them asserted.

func latestResults(
    of queries: FutureStream<String>,
    search: @escaping @Sendable (String) -> FutureStream<Int>
)
    -> FutureStream<Int>
{
    let results = StreamPromise<Int>(capacity: 0)
    let current = Mutex<CancellationRequest?>(nil)
    queries.onSuccess(on: .synchronous) { query in
        let next = CancellationRequest()
        let previous = current.withLock { request in
            defer { request = next }
            return request
        }
        previous?.cancel()  // outside the lock: it runs handlers
        results.resolve(with: search(query), cancellationToken: next.token)
    }
    queries.onFinish(on: .synchronous) { results.finish() }
    return results.stream
}

func withoutRepeats(_ readings: FutureStream<Int>) -> FutureStream<Int> {
    let last = Mutex<Int?>(nil)
    return readings.filter(on: .synchronous) { value in
        last.withLock { previous in
            defer { previous = value }
            return previous != value
        }
    }
}

func ticks(every interval: Duration, clock: some TimerClock, until token: CancellationToken) -> FutureStream<Int> {
    let ticks = StreamPromise<Int>(capacity: 1)
    Task {
        var count = 0
        while (try? await withCancellation(token, operation: { try await clock.sleep(for: interval) })) != nil {
            count += 1
            ticks.fulfill(count)
        }
        ticks.finish()
    }
    return ticks.stream
}

/// The values a stream delivers on `.synchronous`, and whether it finished.
private final class Seen: Sendable {
    let values = Locked<[Int]>([])
    let finished = Locked(false)

    init(_ stream: FutureStream<Int>) {
        stream.onSuccess(on: .synchronous) { value in self.values.withLock { $0.append(value) } }
        stream.onFinish(on: .synchronous) { self.finished.withLock { $0 = true } }
    }
}

@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct StreamsGuideExamples {
    @Test func `a promise finished at once is an empty stream; one kept and never finished never ends`() {
        let nothing = StreamPromise<Int>(capacity: 0)
        nothing.finish()
        let empty = Seen(nothing.stream)
        #expect(nothing.stream.isFinished && empty.finished.value && empty.values.value.isEmpty)

        let kept = StreamPromise<Int>(capacity: 1)
        let open = Seen(kept.stream)
        kept.fulfill(1)
        #expect(!kept.stream.isFinished && !open.finished.value && open.values.value == [1])
    }

    @Test func `merged streams: every source's values, and the end only when finished`() {
        let sources = [StreamPromise<Int>(capacity: 0), StreamPromise<Int>(capacity: 0)]
        let merged = StreamPromise<Int>(capacity: 0)
        for source in sources { merged.resolve(with: source.stream) }
        let seen = Seen(merged.stream)
        sources[0].fulfill(1)
        sources[1].fulfill(2)
        sources[0].finish()
        #expect(seen.values.value == [1, 2] && !seen.finished.value)
        merged.finish()
        #expect(seen.finished.value)
    }

    @Test func `latest results: a new query stops forwarding the previous query's results`() {
        let queries = StreamPromise<String>(capacity: 0)
        let inner = Locked<[String: StreamPromise<Int>]>([:])
        let latest = latestResults(of: queries.stream) { query in
            let promise = StreamPromise<Int>(capacity: 0)
            inner.withLock { $0[query] = promise }
            return promise.stream
        }
        let seen = Seen(latest)
        queries.fulfill("a")
        inner.value["a"]?.fulfill(1)
        queries.fulfill("b")
        inner.value["a"]?.fulfill(2)  // stale: not forwarded
        inner.value["b"]?.fulfill(3)
        queries.finish()
        #expect(seen.values.value == [1, 3] && seen.finished.value)
    }

    @Test func `without repeats: a value equal to the one before is skipped`() {
        let readings = StreamPromise<Int>(capacity: 0)
        let seen = Seen(withoutRepeats(readings.stream))
        for value in [1, 1, 2, 2, 2, 1] { readings.fulfill(value) }
        #expect(seen.values.value == [1, 2, 1])
    }

    @Test func `ticks: one per interval of the clock, and the end when the token is cancelled`() async {
        let clock = ManualClock()
        let stop = CancellationRequest()
        let seen = Seen(ticks(every: .seconds(1), clock: clock, until: stop.token))
        // The task reaches each sleep in its own time: advance until three sleeps have fired.
        #expect(
            await eventually {
                clock.advance(by: .seconds(1))
                return seen.values.value.count >= 3
            }
        )
        stop.cancel()
        #expect(await eventually { seen.finished.value })
        let values = seen.values.value
        #expect(values == Array(1...values.count))
    }

    // MARK: - "Operator reference": its three examples, run

    @Test func `suggestions: only the query typed last before the pause is looked up`() async {
        let clock = ManualClock()
        let keystrokes = StreamPromise<String>(capacity: 0)
        let lookedUp = Locked<[String]>([])
        let suggestions = keystrokes.stream
            .map(on: .synchronous) { $0.lowercased() }
            .removeDuplicates()
            .debounce(for: .milliseconds(300), clock: clock)
            .flatMapLatest(on: .synchronous) { query, token -> Future<[String]> in
                lookedUp.withLock { $0.append(query) }
                return Future(cancellationToken: token) { [query, query + "s"] }
            }
        let shown = Locked<[[String]]>([])
        suggestions.onSuccess(on: .synchronous) { list in shown.withLock { $0.append(list) } }
        keystrokes.fulfill("swi")
        keystrokes.fulfill("swift")
        #expect(lookedUp.value.isEmpty)  // still typing
        clock.advance(by: .milliseconds(300))
        #expect(lookedUp.value == ["swift"])  // looks up "swift" only
        #expect(await eventually { shown.value == [["swift", "swifts"]] })
    }

    @Test func `average: collect ends in a future once the stream finished`() async throws {
        let samples = StreamPromise<Int>(capacity: 0)
        let average: Future<Double> = samples.stream.collect().map(on: .synchronous) { values in
            values.isEmpty ? 0 : Double(values.reduce(0, +)) / Double(values.count)
        }
        for sample in [3, 4, 5] { samples.fulfill(sample) }
        #expect(!average.isCompleted)
        samples.finish()
        #expect(try await average.value() == 4.0)
    }

    @Test func `heartbeats: no timeout while ticks come, FutureError.timeout 30 s after the last`() {
        let clock = ManualClock()
        let stop = CancellationRequest()
        let heartbeats = StreamPromise<Int>(capacity: 0)
        let watched = heartbeats.stream.timeout(after: .seconds(30), clock: clock)
        let failures = Locked<[String]>([])
        watched.onFailure(on: .synchronous) { error in failures.withLock { $0.append("\(error)") } }
        let beats = Locked(0)
        let ticks = FutureStream<Int>.interval(.seconds(10), clock: clock, cancellationToken: stop.token)
        ticks.onSuccess(on: .synchronous) { tick in
            beats.withLock { $0 += 1 }
            heartbeats.fulfill(tick)
        }
        clock.advance(by: .seconds(60))
        #expect(beats.value == 6)  // six heartbeats: no timeout
        #expect(failures.value.isEmpty)
        stop.cancel()
        clock.advance(by: .seconds(30))  // no heartbeat for 30 s
        #expect(failures.value == ["\(FutureError.timeout)"])
        #expect(watched.isFinished)
        withExtendedLifetime(ticks) {}
    }
}
