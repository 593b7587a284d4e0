// The multi-threaded paths, each beside its peer in the same run (scenarios 10, 12, 13, 14 of
// Documentation/Performance.md; 11, the shared token, is in CancellationBenchmarks; 2 is the map chain).
//
//   10. 10,000 `Future { async }`, then `sequence()` awaited      vs 10,000 `Task { }` awaited     target <= 1.0
//   12. 100,000 values StreamPromise -> values -> for await       vs AsyncStream (unbounded)      target <= 0.5
//   13. 1,000 pending promises with one continuation (mallocs)    vs NIO                          bytes <= 0.75 x
//   14. 100,000 empty jobs on `.default`                          vs DispatchQueue.global()       stays <= 1.0
//
// One iteration does the whole batch (10,000 futures, 100,000 values, 100,000 jobs): the tables read per
// iteration; divide by the batch size for the per-operation figure (Documentation/Performance.md does).

import Benchmark
import Dispatch
import FutureLib
import NIOCore
import NIOEmbedded
import Synchronization

/// One batch per iteration; a few seconds at most.
private var batchConfiguration: Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .instructions, .mallocCountTotal, .throughput],
        warmupIterations: 3,
        maxDuration: .seconds(2),
        maxIterations: 200
    )
}

/// 1,000 operations per iteration, as the other scenarios.
private var kiloConfiguration: Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .instructions, .mallocCountTotal, .throughput],
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 1_000
    )
}

private let asyncFutureCount = 10_000
private let streamValueCount = 100_000
private let jobCount = 100_000

/// Counts jobs down to zero on any thread; the last one wakes the waiting benchmark thread.
private final class JobCountdown: Sendable {
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

func multiThreadedBenchmarks() {
    asyncFuturesThenSequence()
    streamValuesForAwait()
    pendingPromiseMemory()
    emptyJobs()
}

// MARK: 10. 10,000 Future { async }, then sequence(), awaited

private func asyncFuturesThenSequence() {
    Benchmark("10 FutureLib: 10000 Future { async }, sequence() awaited", configuration: batchConfiguration) {
        benchmark async throws in
        for _ in benchmark.scaledIterations {
            var futures: [Future<Int>] = []
            futures.reserveCapacity(asyncFutureCount)
            for index in 0..<asyncFutureCount {
                futures.append(Future { () async throws -> Int in index })
            }
            blackHole(try await futures.sequence().value())
        }
    }

    Benchmark("10 Swift: 10000 Task { }, each awaited", configuration: batchConfiguration) { benchmark async in
        for _ in benchmark.scaledIterations {
            var tasks: [Task<Int, Never>] = []
            tasks.reserveCapacity(asyncFutureCount)
            for index in 0..<asyncFutureCount {
                tasks.append(Task { index })
            }
            var values: [Int] = []
            values.reserveCapacity(asyncFutureCount)
            for task in tasks { values.append(await task.value) }
            blackHole(values)
        }
    }
}

// MARK: 12. 100,000 values through StreamPromise -> values -> for await

private func streamValuesForAwait() {
    Benchmark("12 FutureLib: 100000 values, StreamPromise -> values -> for await", configuration: batchConfiguration) {
        benchmark async throws in
        for _ in benchmark.scaledIterations {
            let promise = StreamPromise<Int>(capacity: 0)
            // Subscribed before the producer starts (capacity 0 keeps nothing for later).
            var iterator = promise.stream.values(buffering: .unbounded).makeAsyncIterator()
            let producer = Task {
                for value in 0..<streamValueCount { promise.fulfill(value) }
                promise.finish()
            }
            var sum = 0
            while let value = try await iterator.next() { sum &+= value }
            blackHole(sum)
            await producer.value
        }
    }

    Benchmark("12 Swift: 100000 values, AsyncStream (unbounded), for await", configuration: batchConfiguration) {
        benchmark async in
        for _ in benchmark.scaledIterations {
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
            let producer = Task {
                for value in 0..<streamValueCount { continuation.yield(value) }
                continuation.finish()
            }
            var sum = 0
            for await value in stream { sum &+= value }
            blackHole(sum)
            await producer.value
        }
    }
}

// MARK: 13. mallocs per pending promise with one continuation (bytes: CallgrindDriver `mallinfo`)

private func pendingPromiseMemory() {
    // Only building the pending promises is measured; completing them (and freeing) is not.
    Benchmark("13 FutureLib: pending promise + 1 continuation (mallocs)", configuration: kiloConfiguration) {
        benchmark in
        var pending: [Promise<Int>] = []
        pending.reserveCapacity(benchmark.scaledIterations.count)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let promise = Promise<Int>()
            promise.future.onSuccess(on: .synchronous) { blackHole($0) }
            pending.append(promise)
        }
        benchmark.stopMeasurement()
        for promise in pending { promise.fulfill(1) }
    }

    Benchmark("13 NIO: pending promise + 1 whenSuccess (mallocs)", configuration: kiloConfiguration) {
        benchmark in
        let loop = EmbeddedEventLoop()
        var pending: [EventLoopPromise<Int>] = []
        pending.reserveCapacity(benchmark.scaledIterations.count)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let promise = loop.makePromise(of: Int.self)
            promise.futureResult.whenSuccess { blackHole($0) }
            pending.append(promise)
        }
        benchmark.stopMeasurement()
        for promise in pending { promise.succeed(1) }
        try? loop.syncShutdownGracefully()
    }
}

// MARK: 14. 100,000 empty jobs on .default vs DispatchQueue.global()

private func emptyJobs() {
    Benchmark("14 FutureLib: 100000 empty jobs on .default", configuration: batchConfiguration) { benchmark in
        for _ in benchmark.scaledIterations {
            let countdown = JobCountdown(jobCount)
            let context: DefaultExecutionContext = .default
            for _ in 0..<jobCount { context.execute { countdown.arrive() } }
            countdown.wait()
        }
    }

    Benchmark("14 Dispatch: 100000 empty jobs on DispatchQueue.global()", configuration: batchConfiguration) {
        benchmark in
        for _ in benchmark.scaledIterations {
            let countdown = JobCountdown(jobCount)
            let queue = DispatchQueue.global()
            for _ in 0..<jobCount { queue.async { countdown.arrive() } }
            countdown.wait()
        }
    }
}
