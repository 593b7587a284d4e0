// Scenario 11 of Documentation/Performance.md: the server pattern, one shutdown or request token that every
// concurrent piece of work registers on and unregisters from.
//
//   11. T threads each doing onCancel + unregister on ONE shared token, per operation
//       vs the same T threads each on a token of its own (no shared state: the floor)    target <= 2.0 at 2 threads
//       and at 1 thread, for the ratio (shared and own are the same thing there).
//
// One iteration = every thread doing `operationsPerThread` register+unregister pairs, started together
// (`runTogether`); the table reads per iteration, so divide by threads x operationsPerThread
// for the per-operation figure (Documentation/Performance.md does). On 2 cores shared with other work, the
// 2-thread runs measure contention only while both threads really run at once; more cores contend more.

import Benchmark
import Cancellation
import Dispatch
import Synchronization

private let operationsPerThread = 10_000

private var contentionConfiguration: Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .instructions, .mallocCountTotal, .throughput],
        warmupIterations: 5,
        maxDuration: .seconds(2),
        maxIterations: 500
    )
}

/// `threads` threads at once, each registering and unregistering `operationsPerThread` times on `tokens[thread]`.
private func registerAndUnregister(on tokens: [CancellationToken]) {
    runTogether(threads: tokens.count) { thread in
        let token = tokens[thread]
        for _ in 0..<operationsPerThread {
            let registration = token.onCancel {}
            blackHole(registration.unregister())
        }
    }
}

/// Runs `body(thread)` on `threads` threads at once: the caller and `threads - 1` jobs on
/// `DispatchQueue.global()`, released together once every one of them is running, so that they really
/// overlap (`DispatchQueue.concurrentPerform` may run every iteration on the caller when its workers are
/// slow to start, as on a loaded machine). Returns when all have finished.
private func runTogether(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let start = StartLine(threads)
    let done = DispatchGroup()
    for thread in 1..<max(threads, 1) {
        done.enter()
        DispatchQueue.global().async {
            start.arriveAndWait()
            body(thread)
            done.leave()
        }
    }
    start.arriveAndWait()
    body(0)
    done.wait()
}

/// A one-shot spinning barrier: each thread waits until `count` threads arrived.
private final class StartLine: Sendable {
    // Sendable: an Atomic and a constant.
    private let arrived = Atomic<Int>(0)
    private let count: Int

    init(_ count: Int) { self.count = count }

    func arriveAndWait() {
        arrived.add(1, ordering: .acquiringAndReleasing)
        while arrived.load(ordering: .acquiring) < count {}
    }
}

func sharedTokenContention() {
    for threads in [1, 2] {
        Benchmark(
            "11 FutureLib: \(threads) thread(s), \(operationsPerThread) onCancel + unregister each, one shared token",
            configuration: contentionConfiguration
        ) { benchmark in
            let request = CancellationRequest()
            let tokens = Array(repeating: request.token, count: threads)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                registerAndUnregister(on: tokens)
            }
            benchmark.stopMeasurement()
            blackHole(request)
        }

        Benchmark(
            "11 FutureLib: \(threads) thread(s), \(operationsPerThread) onCancel + unregister each, a token per thread",
            configuration: contentionConfiguration
        ) { benchmark in
            let requests = (0..<threads).map { _ in CancellationRequest() }
            let tokens = requests.map(\.token)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                registerAndUnregister(on: tokens)
            }
            benchmark.stopMeasurement()
            blackHole(requests)
        }
    }
}
