// Streams: 1,000 events through one subscriber and a `map`, FutureStream beside the standard library's
// AsyncStream in the same run. One iteration = one pipeline built, 1,000 events sent through it, and its end;
// so events per second = throughput (iterations per second) × 1,000.
//
//   FutureLib: stream map + subscriber, inline      map and handler on `.synchronous` (the producer's thread)
//   FutureLib: stream map on .default + subscriber  map on FutureLib's pool, one drain job at a time
//   FutureLib: stream values + map, for await       the AsyncSequence bridge, consumed like AsyncStream
//   peer AsyncStream: map, for await                AsyncStream (unbounded) + AsyncMapSequence, for await

import Benchmark
import Dispatch
import FutureLib

/// One iteration is 1,000 events: no scaling.
private var streamConfiguration: Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .cpuTotal, .instructions, .mallocCountTotal, .throughput],
        warmupIterations: 5,
        maxDuration: .seconds(1),
        maxIterations: 1_000
    )
}

private let eventCount = 1_000

func streamBenchmarks() {
    Benchmark("FutureLib: 1000 stream events, map + subscriber, inline", configuration: streamConfiguration) {
        benchmark in
        for _ in benchmark.scaledIterations {
            let promise = StreamPromise<Int>(capacity: 0)
            promise.stream.map(on: .synchronous) { $0 &+ 1 }.onSuccess(on: .synchronous) { blackHole($0) }
            for event in 0..<eventCount { promise.fulfill(event) }
            promise.finish()
        }
    }

    Benchmark("FutureLib: 1000 stream events, map on .default + subscriber", configuration: streamConfiguration) {
        benchmark in
        for _ in benchmark.scaledIterations {
            let promise = StreamPromise<Int>(capacity: 0)
            let done = DispatchSemaphore(value: 0)
            let mapped = promise.stream.map(on: .default) { $0 &+ 1 }
            mapped.onSuccess(on: .synchronous) { blackHole($0) }
            mapped.onFinish(on: .synchronous) { done.signal() }
            for event in 0..<eventCount { promise.fulfill(event) }
            promise.finish()
            done.wait()
        }
    }

    Benchmark("FutureLib: 1000 stream events, values + map, for await", configuration: streamConfiguration) {
        benchmark async in
        for _ in benchmark.scaledIterations {
            let promise = StreamPromise<Int>(capacity: 0)
            // Subscribed before the producer starts (capacity 0 keeps nothing for later).
            var iterator = promise.stream.values(buffering: .unbounded).map { $0 &+ 1 }.makeAsyncIterator()
            let producer = Task {
                for event in 0..<eventCount { promise.fulfill(event) }
                promise.finish()
            }
            while let value = try? await iterator.next() { blackHole(value) }
            await producer.value
        }
    }

    Benchmark("peer AsyncStream: 1000 events, map, for await", configuration: streamConfiguration) {
        benchmark async in
        for _ in benchmark.scaledIterations {
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
            let producer = Task {
                for event in 0..<eventCount { continuation.yield(event) }
                continuation.finish()
            }
            for await value in stream.map({ $0 &+ 1 }) { blackHole(value) }
            await producer.value
        }
    }
}
