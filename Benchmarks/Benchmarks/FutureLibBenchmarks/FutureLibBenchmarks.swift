// Benchmarks of the FutureLib module, each beside its closest peer in the same run.
//
// Names start with the scenario number of Documentation/Performance.md and say whose code runs:
// "1 FutureLib: …" beside "1 NIO: …" (NIO's EventLoopFuture) or "7 Swift: …" (a Swift Task).
// Scripts/bench-report.py pairs them by exact name: rename both places together.
//
// Targets (FutureLib / peer, lower is better):
//   1. promise + 1 continuation + fulfil   <= 1.0, and mallocs <= NIO's
//   2. chain of 10 map, then fulfil        <= 1.0
//   3. sequence() of 1,000 completed       <= 1.0 (vs whenAllSucceed)
//   4. fulfil here, continuation on a queue / event loop: reported (throughput)
//   7. value() async on a completed future vs await task.value: reported
//   9. async map on a completed future, awaited <= 1.5 (vs Future { async }, awaited; and that beside a Task)
//   8. traverse of 10^3 ... 10^6 elements: per-element cost flat in N
//   8. cancel a continuation's token with 10^3 ... 10^6 continuations pending on one future: per-cancel cost flat in N

import Benchmark
import Dispatch
import FutureLib
import NIOCore
import NIOEmbedded
import NIOPosix
import Synchronization

// MARK: - Configuration

// Computed, not stored: `Benchmark.Configuration` and `BenchmarkMetric` are not `Sendable`, so no global `let`.
// `throughput` is needed by the JMH export that Scripts/bench-report.py reads.
private var metrics: [BenchmarkMetric] {
    [.wallClock, .instructions, .mallocCountTotal, .throughput]
}

/// 1,000 operations per iteration (`scalingFactor: .kilo`), so the console table reads per operation.
private var configuration: Benchmark.Configuration {
    .init(metrics: metrics, warmupIterations: 10, scalingFactor: .kilo, maxDuration: .seconds(1), maxIterations: 1_000)
}

/// One operation per iteration (one `sequence()` of 1,000 futures).
private var singleOperationConfiguration: Benchmark.Configuration {
    .init(metrics: metrics, warmupIterations: 10, maxDuration: .seconds(1), maxIterations: 1_000)
}

/// The scaling runs: one iteration handles `size` elements, so big sizes get few iterations.
private func scalingConfiguration(size: Int) -> Benchmark.Configuration {
    .init(
        metrics: metrics,
        warmupIterations: size >= 1_000_000 ? 1 : 3,
        maxDuration: .seconds(2),
        maxIterations: max(5, min(500, 2_000_000 / size))
    )
}

/// The sizes of the scaling runs (scenario 8).
private let scalingSizes = [1_000, 10_000, 100_000, 1_000_000]

// MARK: - Fixtures

/// Counts continuations down to zero on any thread; the last one wakes the waiting benchmark thread.
private final class Countdown: Sendable {
    // Sendable: an Atomic and a DispatchSemaphore, both thread-safe.
    private let remaining: Atomic<Int>
    private let finished = DispatchSemaphore(value: 0)

    init(_ count: Int) {
        remaining = Atomic(count)
    }

    func arrive() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            finished.signal()
        }
    }

    func wait() {
        finished.wait()
    }
}

/// Scenario 4's serial queue: continuations run on its thread while the benchmark thread completes promises.
private let continuationQueue = DispatchQueue(label: "bench.continuations")

/// Scenario 4's peer: one event loop of a NIO thread pool (the loop's thread runs the callbacks).
private let eventLoop = MultiThreadedEventLoopGroup.singleton.next()

// MARK: - Benchmarks

let benchmarks: @Sendable () -> Void = {
    promiseWithOneContinuation()
    mapChain()
    sequenceOfCompleted()
    continuationOnAnotherThread()
    valueAsyncOnCompleted()
    asyncClosures()
    traverseScaling()
    cancelPendingContinuationScaling()
    streamBenchmarks()  // StreamBenchmarks.swift
    multiThreadedBenchmarks()  // MultiThreadedBenchmarks.swift: 10, 12, 13, 14
}

// MARK: 1. promise + one continuation + completion

private func promiseWithOneContinuation() {
    Benchmark("1 FutureLib: promise + 1 continuation + fulfil", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            let promise = Promise<Int>()
            promise.future.onSuccess(on: .synchronous) { blackHole($0) }
            promise.fulfill(1)
        }
    }

    Benchmark("1 NIO: promise + 1 continuation + succeed", configuration: configuration) { benchmark in
        let loop = EmbeddedEventLoop()
        for _ in benchmark.scaledIterations {
            let promise = loop.makePromise(of: Int.self)
            promise.futureResult.whenSuccess { blackHole($0) }
            promise.succeed(1)
        }
        try? loop.syncShutdownGracefully()
    }
}

// MARK: 2. a chain of ten maps built on a pending future, then completed

private func mapChain() {
    Benchmark("2 FutureLib: 10-map chain, then fulfil", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            let promise = Promise<Int>()
            var future = promise.future
            for _ in 0..<10 {
                future = future.map(on: .synchronous) { $0 &+ 1 }
            }
            future.onSuccess(on: .synchronous) { blackHole($0) }
            promise.fulfill(1)
        }
    }

    Benchmark("2 NIO: 10-map chain, then succeed", configuration: configuration) { benchmark in
        let loop = EmbeddedEventLoop()
        for _ in benchmark.scaledIterations {
            let promise = loop.makePromise(of: Int.self)
            var future = promise.futureResult
            for _ in 0..<10 {
                future = future.map { $0 &+ 1 }
            }
            future.whenSuccess { blackHole($0) }
            promise.succeed(1)
        }
        try? loop.syncShutdownGracefully()
    }
}

// MARK: 3. combining 1,000 completed futures

private func sequenceOfCompleted() {
    Benchmark("3 FutureLib: sequence() of 1,000 completed", configuration: singleOperationConfiguration) { benchmark in
        let futures = (0..<1_000).map { Future(value: $0) }
        benchmark.startMeasurement()
        futures.sequence().onSuccess(on: .synchronous) { blackHole($0) }
        benchmark.stopMeasurement()
    }

    Benchmark("3 NIO: whenAllSucceed of 1,000 succeeded", configuration: singleOperationConfiguration) { benchmark in
        let loop = EmbeddedEventLoop()
        let futures = (0..<1_000).map { loop.makeSucceededFuture($0) }
        benchmark.startMeasurement()
        EventLoopFuture.whenAllSucceed(futures, on: loop).whenSuccess { blackHole($0) }
        benchmark.stopMeasurement()
        try? loop.syncShutdownGracefully()
    }
}

// MARK: 4. completion on this thread, continuation on another (throughput)

private func continuationOnAnotherThread() {
    // Each iteration completes 1,000 promises here while their continuations run on the queue's thread, and
    // waits until the last one ran: the time is the throughput of the hand-off.
    Benchmark("4 FutureLib: fulfil here, continuation on a DispatchQueue", configuration: configuration) { benchmark in
        let countdown = Countdown(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            let promise = Promise<Int>()
            promise.future.onSuccess(on: continuationQueue) { _ in countdown.arrive() }
            promise.fulfill(1)
        }
        countdown.wait()
    }

    // NIO runs callbacks on the future's event loop: registering and succeeding from outside the loop each
    // hop onto it, which is what a caller on another thread gets.
    Benchmark("4 NIO: succeed here, whenSuccess on an event loop", configuration: configuration) { benchmark in
        let countdown = Countdown(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            let promise = eventLoop.makePromise(of: Int.self)
            promise.futureResult.whenSuccess { _ in countdown.arrive() }
            promise.succeed(1)
        }
        countdown.wait()
    }
}

// MARK: 7. value() async on a completed future vs await task.value

private func valueAsyncOnCompleted() {
    Benchmark("7 FutureLib: value() async, completed future", configuration: configuration) { benchmark async throws in
        let future = Future(value: 1)
        for _ in benchmark.scaledIterations {
            blackHole(try await future.value())
        }
    }

    Benchmark("7 Swift: await task.value, finished task", configuration: configuration) { benchmark async in
        let task = Task { 1 }
        _ = await task.value
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(await task.value)
        }
        benchmark.stopMeasurement()
    }
}

// MARK: 8. traverse of 10^3 ... 10^6 elements (per-element cost should not grow with N)

private func traverseScaling() {
    for size in scalingSizes {
        Benchmark(
            "8 FutureLib: traverse, \(size) elements",
            configuration: scalingConfiguration(size: size)
        ) { benchmark in
            let elements = Array(0..<size)
            benchmark.startMeasurement()
            elements.traverse(on: .synchronous) { Future(value: $0) }.onSuccess(on: .synchronous) { blackHole($0) }
            benchmark.stopMeasurement()
        }

        // The peer: NIO has no traverse; the same work is making the futures and whenAllSucceed.
        Benchmark(
            "8 NIO: makeSucceededFuture + whenAllSucceed, \(size) elements",
            configuration: scalingConfiguration(size: size)
        ) { benchmark in
            let loop = EmbeddedEventLoop()
            let elements = Array(0..<size)
            benchmark.startMeasurement()
            EventLoopFuture.whenAllSucceed(elements.map { loop.makeSucceededFuture($0) }, on: loop).whenSuccess {
                blackHole($0)
            }
            benchmark.stopMeasurement()
            try? loop.syncShutdownGracefully()
        }
    }
}

// MARK: 8. cancel a continuation's token with 10^3 ... 10^6 continuations pending on one future

/// `count` continuations pending on one promise, each registered with its own request's token (the server pattern:
/// every request waits on one long-lived future, and a disconnect cancels its token). Built in `setup`.
private final class PendingContinuations: @unchecked Sendable {
    // Sendable: only the benchmark's own thread touches it; setup, the iterations and teardown run one after another.
    let count: Int
    private var promise = Promise<Int>()
    var requests: [CancellationRequest] = []

    init(count: Int) {
        self.count = count
    }

    func build() {
        promise = Promise<Int>()
        requests = (0..<count).map { _ in register() }
    }

    func register() -> CancellationRequest {
        let request = CancellationRequest()
        promise.future.onSuccess(on: .synchronous, cancellationToken: request.token) { blackHole($0) }
        return request
    }

    func release() {
        promise.fulfill(1)
        requests = []
    }
}

private func cancelPendingContinuationScaling() {
    let operationsPerIteration = 1_000
    for size in scalingSizes {
        let fixture = PendingContinuations(count: size)
        // Cancel the tokens of 1,000 continuations picked at random, then register replacements, unmeasured, so that
        // `size` stay pending. Removal used to scan the future's continuations: O(N) per cancel.
        Benchmark(
            "8 FutureLib: cancel a continuation's token, \(size) continuations pending",
            configuration: .init(
                metrics: metrics,
                warmupIterations: 3,
                scalingFactor: .kilo,
                maxDuration: .seconds(1),
                maxIterations: 300
            )
        ) { benchmark in
            let indices = Array(fixture.requests.indices.shuffled().prefix(operationsPerIteration))
            let victims = indices.map { fixture.requests[$0] }
            benchmark.startMeasurement()
            for request in victims {
                request.cancel()
            }
            benchmark.stopMeasurement()
            for index in indices {
                fixture.requests[index] = fixture.register()
            }
        } setup: {
            fixture.build()
        } teardown: {
            fixture.release()
        }
    }
}

// MARK: 9. An async closure in a combinator vs Future { async } vs a plain Task

/// Each awaits a task that ran on FutureLib's pool (or the cooperative pool for the plain `Task`): the cost is mostly
/// the hops between threads, which is what an async closure in `map` must not add to.
private func asyncClosures() {
    Benchmark("9 FutureLib: async map on a completed future, awaited", configuration: configuration) {
        benchmark async throws in
        let future = Future(value: 1)
        for _ in benchmark.scaledIterations {
            blackHole(try await future.map { value async in value + 1 }.value())
        }
    }

    Benchmark("9 FutureLib: Future { async }, awaited", configuration: configuration) { benchmark async throws in
        for _ in benchmark.scaledIterations {
            blackHole(try await Future { () async throws -> Int in 2 }.value())
        }
    }

    Benchmark("9 Swift: Task { }, awaited", configuration: configuration) { benchmark async in
        for _ in benchmark.scaledIterations {
            blackHole(await Task { 2 }.value)
        }
    }
}
