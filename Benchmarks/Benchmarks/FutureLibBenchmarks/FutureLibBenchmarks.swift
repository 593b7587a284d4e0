// Benchmarks of the FutureLib module, each beside its peer (NIO's EventLoopFuture) in the same run.
//
// FutureLib's Future/Promise are not written yet, so only the peer side is here for now. When they land, add
// `.product(name: "FutureLib", package: "FutureLib")` to this target in ../../Package.swift and a FutureLib
// benchmark next to each peer below, with the same name apart from its prefix.

import Benchmark
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

let benchmarks: @Sendable () -> Void = {
    // EmbeddedEventLoop runs callbacks inline on the calling thread, the closest peer of `.synchronous`.
    Benchmark("peer NIO: promise + 1 callback + succeed", configuration: configuration) { benchmark in
        let loop = EmbeddedEventLoop()
        for _ in benchmark.scaledIterations {
            let promise = loop.makePromise(of: Int.self)
            promise.futureResult.whenSuccess { blackHole($0) }
            promise.succeed(1)
        }
        try? loop.syncShutdownGracefully()
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
}
