// Benchmarks of the FutureLib module, each beside its peer (NIO's EventLoopFuture on an EmbeddedEventLoop,
// which runs callbacks inline like `.synchronous`) in the same run. Names pair up: "FutureLib: X" / "peer NIO: X".
//
// Targets (FutureLib / peer, lower is better):
//   1. promise + 1 continuation + fulfil   <= 1.0, and mallocs <= NIO's
//   2. chain of 10 map, then fulfil        <= 1.0
//   3. sequence() of 1,000 completed       <= 1.0 (vs whenAllSucceed)

import Benchmark
import FutureLib
import NIOCore
import NIOEmbedded

// Computed, not stored: `Benchmark.Configuration` is not `Sendable`, so no global `let`.
private var configuration: Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .cpuTotal, .instructions, .mallocCountTotal, .throughput],
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 2_000
    )
}

/// One iteration is one `sequence()` of 1,000 futures: no scaling.
private var sequenceConfiguration: Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .cpuTotal, .instructions, .mallocCountTotal, .throughput],
        warmupIterations: 5,
        maxDuration: .seconds(1),
        maxIterations: 2_000
    )
}

let benchmarks: @Sendable () -> Void = {
    streamBenchmarks()  // StreamBenchmarks.swift

    // MARK: 1. promise + one continuation + completion

    Benchmark("FutureLib: promise + 1 callback + succeed", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            let promise = Promise<Int>()
            promise.future.onSuccess(on: .synchronous) { blackHole($0) }
            promise.fulfill(1)
        }
    }

    Benchmark("peer NIO: promise + 1 callback + succeed", configuration: configuration) { benchmark in
        let loop = EmbeddedEventLoop()
        for _ in benchmark.scaledIterations {
            let promise = loop.makePromise(of: Int.self)
            promise.futureResult.whenSuccess { blackHole($0) }
            promise.succeed(1)
        }
        try? loop.syncShutdownGracefully()
    }

    // MARK: 2. a chain of ten maps built on a pending future, then completed

    Benchmark("FutureLib: map chain of 10, then succeed", configuration: configuration) { benchmark in
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

    Benchmark("peer NIO: map chain of 10, then succeed", configuration: configuration) { benchmark in
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

    // MARK: 3. combining 1,000 completed futures

    Benchmark("FutureLib: sequence of 1000 completed", configuration: sequenceConfiguration) { benchmark in
        let futures = (0..<1_000).map { Future(value: $0) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            futures.sequence().onSuccess(on: .synchronous) { blackHole($0) }
        }
    }

    Benchmark("peer NIO: sequence of 1000 completed", configuration: sequenceConfiguration) { benchmark in
        let loop = EmbeddedEventLoop()
        let futures = (0..<1_000).map { loop.makeSucceededFuture($0) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            EventLoopFuture.whenAllSucceed(futures, on: loop).whenSuccess { blackHole($0) }
        }
        try? loop.syncShutdownGracefully()
    }
}
