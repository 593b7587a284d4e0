// A plain release driver for the stream operators (issue 41): FutureLib's operators against
// swift-async-algorithms' over `AsyncStream`, and against the hand-written FutureLib equivalent
// where one was written before the operator existed, in one process, in alternating rounds
// (medians, so that the machine's load drifts over every variant alike). Then glibc's heap bytes
// per live operator stage, against a `map` stage, and for the operators of several sources per
// stage of 2 and of 4 sources (the difference is what each source adds).
//
//     swift run -c release StreamOperatorsDriver [values per round, default 100000] [rounds, default 7] [cpu]
//
// Each timed variant pushes `values` values from this thread through the operator to a consumer and
// waits until the consumer has seen the end: nanoseconds per value pushed. FutureLib is measured
// twice: with a `.synchronous` subscriber (the push model) and with a `for await` loop over
// `values(buffering: .unbounded)` (the consumer swift-async-algorithms has). The `AsyncStream`s buffer without bound too, so
// the producer never waits in either library. `cpu` measures the process's CPU time instead of
// wall-clock time.

import AsyncAlgorithms
import Dispatch
import FutureLib
import MallocInfo
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@inline(never) func blackHole<T>(_ value: T) { _ = value }

#if canImport(Glibc)
let rusageSelf = __rusage_who_t(0)
#else
let rusageSelf = RUSAGE_SELF
#endif

func processCPUNanoseconds() -> Double {
    var usage = rusage()
    getrusage(rusageSelf, &usage)
    let seconds = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    let microseconds = Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    return seconds * 1e9 + microseconds * 1e3
}

let arguments = CommandLine.arguments.dropFirst()
let numbers = arguments.compactMap { Int($0) }
let valueCount = numbers.first ?? 100_000
let rounds = numbers.dropFirst().first ?? 7
let measuresCPU = arguments.contains("cpu")

func now() -> Double {
    measuresCPU ? processCPUNanoseconds() : Double(DispatchTime.now().uptimeNanoseconds)
}

/// The value pushed at `index`: runs of three equal values, so that `removeDuplicates` keeps a third.
@inline(__always) func value(at index: Int) -> Int { index / 3 }

// MARK: - FutureLib

/// Counts what a consumer saw and signals the end.
final class Sink: @unchecked Sendable {
    // Sendable: `count` is written only by the one `.synchronous` subscriber (on the producing
    // thread) or the one consuming task, and read after `done` has been signalled.
    var count = 0
    let done = DispatchSemaphore(value: 0)
}

/// Subscribes a consumer to `stream` (push: `.synchronous` subscriber; pull: a task's `for await`).
func consume<T: Sendable>(_ stream: FutureStream<T>, pull: Bool) -> Sink {
    let sink = Sink()
    if pull {
        // Subscribed before the producer starts (a late subscriber of a `capacity: 0` stream would
        // miss the first values): the task signals once it holds its iterator.
        let subscribed = DispatchSemaphore(value: 0)
        Task.detached {
            var iterator = stream.values(buffering: .unbounded).makeAsyncIterator()
            subscribed.signal()
            do {
                while let element = try await iterator.next() {
                    blackHole(element)
                    sink.count += 1
                }
            } catch {}
            sink.done.signal()
        }
        subscribed.wait()
    } else {
        stream.onSuccess(on: .synchronous) { element in
            blackHole(element)
            sink.count += 1
        }
        stream.onFinish(on: .synchronous) { sink.done.signal() }
    }
    return sink
}

func futureLibMerge(pull: Bool) -> Int {
    let sources = (0..<4).map { _ in StreamPromise<Int>(capacity: 0) }
    let sink = consume(merge(sources.map(\.stream)), pull: pull)
    for index in 0..<valueCount { sources[index & 3].fulfill(value(at: index)) }
    for source in sources { source.finish() }
    sink.done.wait()
    return sink.count
}

/// What a user wrote before `merge`: a promise fed by one `.synchronous` subscriber per source,
/// finished when the last source has.
func handWrittenMerge() -> Int {
    let sources = (0..<4).map { _ in StreamPromise<Int>(capacity: 0) }
    let merged = StreamPromise<Int>(capacity: 0)
    let remaining = Atomic(4)
    for source in sources {
        source.stream.onComplete(on: .synchronous) { result in merged.resolve(result) }
        source.stream.onFinish(on: .synchronous) {
            if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { merged.finish() }
        }
    }
    let sink = consume(merged.stream, pull: false)
    for index in 0..<valueCount { sources[index & 3].fulfill(value(at: index)) }
    for source in sources { source.finish() }
    sink.done.wait()
    return sink.count
}

func futureLibCombineLatest(pull: Bool) -> Int {
    let first = StreamPromise<Int>(capacity: 0)
    let second = StreamPromise<Int>(capacity: 0)
    let sink = consume(combineLatest(first.stream, second.stream), pull: pull)
    for index in 0..<valueCount { (index & 1 == 0 ? first : second).fulfill(value(at: index)) }
    first.finish()
    second.finish()
    sink.done.wait()
    return sink.count
}

/// What a user wrote before `combineLatest`: one `.synchronous` subscriber per source storing its
/// latest value under a lock, the pair published (outside the lock) once both have one; finished
/// when both sources have.
func handWrittenCombineLatest() -> Int {
    let first = StreamPromise<Int>(capacity: 0)
    let second = StreamPromise<Int>(capacity: 0)
    let combined = StreamPromise<(Int, Int)>(capacity: 0)
    let latest = Latest()
    let remaining = Atomic(2)
    for (source, isFirst) in [(first, true), (second, false)] {
        source.stream.onSuccess(on: .synchronous) { element in
            let pair = latest.values.withLock { values -> (Int, Int)? in
                if isFirst { values.first = element } else { values.second = element }
                guard let first = values.first, let second = values.second else { return nil }
                return (first, second)
            }
            if let pair { combined.fulfill(pair) }
        }
        source.stream.onFinish(on: .synchronous) {
            if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { combined.finish() }
        }
    }
    let sink = consume(combined.stream, pull: false)
    for index in 0..<valueCount { (index & 1 == 0 ? first : second).fulfill(value(at: index)) }
    first.finish()
    second.finish()
    sink.done.wait()
    return sink.count
}

/// The latest value of each source of `handWrittenCombineLatest`.
final class Latest: Sendable {
    let values = Mutex<(first: Int?, second: Int?)>((nil, nil))
}

/// `debounce` with a producer faster than any interval: every value restarts the wait, and the
/// source's end publishes the one waiting value (in both libraries), so the consumer sees one value.
/// FutureLib on its default system clock, swift-async-algorithms on `ContinuousClock`: both real time.
let debounceInterval = Duration.seconds(1)

func futureLibOneSource<T: Sendable>(pull: Bool, _ operation: (FutureStream<Int>) -> FutureStream<T>) -> Int {
    let source = StreamPromise<Int>(capacity: 0)
    let sink = consume(operation(source.stream), pull: pull)
    for index in 0..<valueCount { source.fulfill(value(at: index)) }
    source.finish()
    sink.done.wait()
    return sink.count
}

/// What a user wrote before `debounce`: a `.synchronous` subscriber that, per value, stops the
/// waiting value's timer and starts a new one on the system clock (`makeTimer(after:)`); the timer
/// publishes the waiting value, and so does the source's end, at once.
func handWrittenDebounce() -> Int {
    let source = StreamPromise<Int>(capacity: 0)
    let debounced = StreamPromise<Int>(capacity: 0)
    let waiting = Waiting()
    /// The waiting value, taken if `generation` is still the latest (`nil`: any).
    @Sendable func take(_ generation: Int?) -> Int? {
        waiting.state.withLock { state -> Int? in
            guard generation == nil || generation == state.generation else { return nil }
            defer { state.value = nil }
            return state.value
        }
    }
    source.stream.onSuccess(on: .synchronous) { element in
        let (previous, generation) = waiting.state.withLock { state in
            state.value = element
            state.generation += 1
            defer { state.timer = nil }
            return (state.timer, state.generation)
        }
        previous?.cancel()
        let timer = SystemClock().makeTimer(after: debounceInterval) {
            if let value = take(generation) { debounced.fulfill(value) }
        }
        waiting.state.withLock { $0.timer = timer }
    }
    source.stream.onFinish(on: .synchronous) {
        let timer = waiting.state.withLock { state in
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
        if let value = take(nil) { debounced.fulfill(value) }
        debounced.finish()
    }
    let sink = consume(debounced.stream, pull: false)
    for index in 0..<valueCount { source.fulfill(value(at: index)) }
    source.finish()
    sink.done.wait()
    return sink.count
}

/// The waiting value of `handWrittenDebounce`, its timer, and which value that timer is for.
final class Waiting: Sendable {
    let state = Mutex<(value: Int?, generation: Int, timer: (any ClockTimer)?)>((nil, 0, nil))
}

// MARK: - swift-async-algorithms over AsyncStream

func asyncStreams(_ count: Int) -> [(stream: AsyncStream<Int>, continuation: AsyncStream<Int>.Continuation)] {
    (0..<count).map { _ in AsyncStream<Int>.makeStream(bufferingPolicy: .unbounded) }
}

/// Consumes `sequence` in a task; the producer runs on this thread meanwhile.
func consume<S: AsyncSequence & Sendable>(_ sequence: S) -> Sink where S.Element: Sendable {
    let sink = Sink()
    let subscribed = DispatchSemaphore(value: 0)
    Task.detached {
        var iterator = sequence.makeAsyncIterator()
        subscribed.signal()
        do {
            while let element = try await iterator.next() {
                blackHole(element)
                sink.count += 1
            }
        } catch {}
        sink.done.signal()
    }
    subscribed.wait()
    return sink
}

func asyncAlgorithmsMerge() -> Int {
    let sources = asyncStreams(4)
    // Its `merge` takes 2 or 3 sequences: the fourth goes through a nested merge, which carries half the values.
    let sink = consume(
        AsyncAlgorithms.merge(
            sources[0].stream,
            sources[1].stream,
            AsyncAlgorithms.merge(sources[2].stream, sources[3].stream)
        )
    )
    for index in 0..<valueCount { sources[index & 3].continuation.yield(value(at: index)) }
    for source in sources { source.continuation.finish() }
    sink.done.wait()
    return sink.count
}

func asyncAlgorithmsCombineLatest() -> Int {
    let sources = asyncStreams(2)
    let sink = consume(AsyncAlgorithms.combineLatest(sources[0].stream, sources[1].stream))
    for index in 0..<valueCount { sources[index & 1].continuation.yield(value(at: index)) }
    for source in sources { source.continuation.finish() }
    sink.done.wait()
    return sink.count
}

func asyncAlgorithmsOneSource<S: AsyncSequence & Sendable>(_ operation: (AsyncStream<Int>) -> S) -> Int
where S.Element: Sendable {
    let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .unbounded)
    let sink = consume(operation(stream))
    for index in 0..<valueCount { continuation.yield(value(at: index)) }
    continuation.finish()
    sink.done.wait()
    return sink.count
}

func asyncAlgorithmsDebounce() -> Int {
    asyncAlgorithmsOneSource { $0.debounce(for: debounceInterval, clock: ContinuousClock()) }
}

/// `throttle` (latest) with every value within the interval: the first value at once, the latest
/// held one at the end, once the interval has passed (both libraries wait for it: a CPU-time run
/// does not count the wait).
func asyncAlgorithmsThrottle() -> Int {
    asyncAlgorithmsOneSource { $0._throttle(for: debounceInterval, clock: ContinuousClock()) }
}

// MARK: - Rounds

struct Family {
    let name: String
    let variants: [(name: String, run: () -> Int)]
}

let families = [
    Family(
        name: "merge of 4 streams",
        variants: [
            ("FutureLib merge, .synchronous subscriber", { futureLibMerge(pull: false) }),
            ("FutureLib merge, for await", { futureLibMerge(pull: true) }),
            ("hand-written merge (4 subscribers into a promise)", handWrittenMerge),
            ("AsyncAlgorithms merge over AsyncStream", asyncAlgorithmsMerge),
        ]
    ),
    Family(
        name: "combineLatest of 2 streams",
        variants: [
            ("FutureLib combineLatest, .synchronous subscriber", { futureLibCombineLatest(pull: false) }),
            ("FutureLib combineLatest, for await", { futureLibCombineLatest(pull: true) }),
            ("hand-written combineLatest (2 subscribers, latest values under a lock)", handWrittenCombineLatest),
            ("AsyncAlgorithms combineLatest over AsyncStream", asyncAlgorithmsCombineLatest),
        ]
    ),
    Family(
        name: "debounce(for: 1 s), every value within the interval",
        variants: [
            (
                "FutureLib debounce, .synchronous subscriber",
                { futureLibOneSource(pull: false) { $0.debounce(for: debounceInterval) } }
            ),
            (
                "FutureLib debounce, for await",
                { futureLibOneSource(pull: true) { $0.debounce(for: debounceInterval) } }
            ),
            ("hand-written debounce (a subscriber restarting a SystemClock timer)", handWrittenDebounce),
            ("AsyncAlgorithms debounce over AsyncStream", asyncAlgorithmsDebounce),
        ]
    ),
    Family(
        name: "throttle(for: 1 s), every value within the interval",
        variants: [
            (
                "FutureLib throttle, .synchronous subscriber",
                { futureLibOneSource(pull: false) { $0.throttle(for: debounceInterval) } }
            ),
            (
                "FutureLib throttle, for await",
                { futureLibOneSource(pull: true) { $0.throttle(for: debounceInterval) } }
            ),
            ("AsyncAlgorithms _throttle over AsyncStream", asyncAlgorithmsThrottle),
        ]
    ),
    Family(
        name: "removeDuplicates (runs of 3)",
        variants: [
            (
                "FutureLib removeDuplicates, .synchronous subscriber",
                { futureLibOneSource(pull: false) { $0.removeDuplicates() } }
            ),
            ("FutureLib removeDuplicates, for await", { futureLibOneSource(pull: true) { $0.removeDuplicates() } }),
            (
                "AsyncAlgorithms removeDuplicates over AsyncStream",
                { asyncAlgorithmsOneSource { $0.removeDuplicates() } }
            ),
        ]
    ),
    Family(
        name: "chunks(ofCount: 10)",
        variants: [
            (
                "FutureLib chunks, .synchronous subscriber",
                { futureLibOneSource(pull: false) { $0.chunks(ofCount: 10) } }
            ),
            ("FutureLib chunks, for await", { futureLibOneSource(pull: true) { $0.chunks(ofCount: 10) } }),
            ("AsyncAlgorithms chunks over AsyncStream", { asyncAlgorithmsOneSource { $0.chunks(ofCount: 10) } }),
        ]
    ),
]

func fixed0(_ value: Double) -> String { String(Int(value.rounded())) }
func fixed2(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

print("values per round: \(valueCount), rounds: \(rounds), \(measuresCPU ? "process CPU time" : "wall-clock time")")
// `STREAM_BENCH_ONLY=<text>`: only the variants whose name contains it (for a profiler).
let only = getenv("STREAM_BENCH_ONLY").map { String(cString: $0) }
for family in families where only == nil || family.variants.contains(where: { $0.name.contains(only!) }) {
    if let only {
        for variant in family.variants where variant.name.contains(only) {
            for _ in 0..<rounds { blackHole(variant.run()) }
        }
        continue
    }
    // Warm-up, and the check that every variant delivers the same number of elements.
    let counts = family.variants.map { $0.run() }
    print("counts \(family.name): \(counts)")
    var samples = Array(repeating: [Double](), count: family.variants.count)
    for round in 0..<rounds {
        // Alternating: each round starts with the next variant.
        for offset in 0..<family.variants.count {
            let index = (round + offset) % family.variants.count
            let start = now()
            blackHole(family.variants[index].run())
            samples[index].append((now() - start) / Double(valueCount))
        }
    }
    print("\n\(family.name) (elements delivered: \(counts.map(String.init).joined(separator: " / ")))")
    let reference = median(samples[family.variants.count - 1])
    for (index, variant) in family.variants.enumerated() {
        let perValue = median(samples[index])
        let ratio = perValue / reference
        let line = "  \(variant.name): \(fixed0(perValue)) ns per value, \(fixed2(ratio))x AsyncAlgorithms"
        print(line)
    }
}

// MARK: - Heap per live stage

/// glibc's heap bytes per live stage that `make` builds on `sources` sources of its own (the
/// sources, their promises and the final subscriber's share are the same for each operator of
/// that many sources and taken out with the baseline of that many: the sources, the first with one
/// subscriber, and no stage).
func heapPerStage(sources: Int = 1, _ make: ([FutureStream<Int>]) -> AnyObject?) -> Double {
    let count = 10_000
    var promises: [StreamPromise<Int>] = []
    var stages: [AnyObject] = []
    promises.reserveCapacity(count * sources)
    stages.reserveCapacity(count)
    let before = malloc_info_bytes_in_use() + malloc_info_bytes_mapped()
    for _ in 0..<count {
        let made = (0..<sources).map { _ in StreamPromise<Int>(capacity: 0) }
        if let stage = make(made.map(\.stream)) { stages.append(stage) }
        promises.append(contentsOf: made)
    }
    let after = malloc_info_bytes_in_use() + malloc_info_bytes_mapped()
    withExtendedLifetime((promises, stages)) {}
    return Double(after - before) / Double(count)
}

func subscribed<T: Sendable>(_ stream: FutureStream<T>) -> AnyObject {
    stream.onSuccess(on: .synchronous) { blackHole($0) }
    return stream
}

if only != nil { exit(0) }
print(
    "\nheap per live stage (glibc, bytes; a stream with its promise and one .synchronous subscriber, then each operator's stage between them)"
)
let baselines = [1, 2, 4].map { sources in (sources, heapPerStage(sources: sources) { subscribed($0[0]) }) }
let stageKinds: [(String, Int, ([FutureStream<Int>]) -> AnyObject?)] = [
    ("map", 1, { subscribed($0[0].map(on: .synchronous) { $0 + 1 }) }),
    ("filter", 1, { subscribed($0[0].filter(on: .synchronous) { $0 > 0 }) }),
    ("compactMap", 1, { subscribed($0[0].compactMap(on: .synchronous) { $0 }) }),
    ("removeDuplicates", 1, { subscribed($0[0].removeDuplicates()) }),
    ("scan", 1, { subscribed($0[0].scan(0, on: .synchronous) { $0 + $1 }) }),
    ("prefix(10)", 1, { subscribed($0[0].prefix(10)) }),
    ("chunks(ofCount: 10)", 1, { subscribed($0[0].chunks(ofCount: 10)) }),
    ("debounce(for: 1 s)", 1, { subscribed($0[0].debounce(for: debounceInterval)) }),
    ("throttle(for: 1 s)", 1, { subscribed($0[0].throttle(for: debounceInterval)) }),
    ("merge with .never (a new stream of its own)", 1, { subscribed(merge($0[0], .never)) }),
    ("merge of 2", 2, { subscribed(merge($0)) }),
    ("merge of 4", 4, { subscribed(merge($0)) }),
    ("zip of 2", 2, { subscribed(zip($0[0], $0[1])) }),
    ("combineLatest of 2", 2, { subscribed(combineLatest($0[0], $0[1])) }),
    ("async map", 1, { subscribed($0[0].map { value async in value + 1 }) }),
]
for (sources, bytes) in baselines {
    print("  \(sources) source(s) + promise(s), a subscriber on the first, no stage: \(fixed0(bytes))")
}
for (name, sources, make) in stageKinds {
    let baseline = baselines.first { $0.0 == sources }!.1
    let bytes = heapPerStage(sources: sources, make) - baseline
    print("  \(name): \(fixed0(bytes)) more")
}
