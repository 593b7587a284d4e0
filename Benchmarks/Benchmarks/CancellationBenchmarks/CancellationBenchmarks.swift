// Benchmarks of the Cancellation module, each beside its floor or its Swift peer in the same run.
//
// Names start with the scenario number of Documentation/Performance.md and say whose code runs
// ("5 FutureLib: …" beside "5 Swift: …"); Scripts/bench-report.py pairs them by exact name.
// Most benchmarks do 1,000 operations per iteration (`scalingFactor: .kilo`), so the console table reads
// per operation: per register+unregister, per cancelled handler, per unregister, per lock.
// Targets (checked by Scripts/bench-report.py; see Documentation/Performance.md):
//   5. register + unregister            <= 0.5 x withTaskCancellationHandler scope
//   6. cancel, per handler               <= 2 x uncontended Mutex.withLock
//   8. unregister newest / oldest, 10^6 vs 10^3 pending: ratio <= 1.5 (random: beside its memory floor); cancel per handler flat in N
//   onCancel on .none / .cancelled       0 mallocs

import Benchmark
import BenchmarkSupport
import Cancellation
import Synchronization

// MARK: - Configuration

/// Operations per iteration; every benchmark is scaled by this many (`.kilo`).
private let operationsPerIteration = 1_000

// Computed, not stored: `Benchmark.Configuration` and `BenchmarkMetric` are not `Sendable`, so no global `let`.
// `throughput` is needed by the JMH export that Scripts/bench-report.py reads.
private var metrics: [BenchmarkMetric] {
    [.wallClock, .instructions, .mallocCountTotal, .throughput]
}

/// Short runs: the whole suite has to finish in a few minutes on a noisy 2-core machine.
private var configuration: Benchmark.Configuration {
    .init(metrics: metrics, warmupIterations: 10, scalingFactor: .kilo, maxDuration: .seconds(1), maxIterations: 1_000)
}

/// The same, but for benchmarks whose every iteration needs unmeasured setup (fresh requests, re-registering).
private var setupHeavyConfiguration: Benchmark.Configuration {
    .init(metrics: metrics, warmupIterations: 5, scalingFactor: .kilo, maxDuration: .seconds(1), maxIterations: 300)
}

/// The scaling runs of `cancel`: one iteration cancels `size` handlers, so big sizes get few iterations.
private func scalingConfiguration(size: Int) -> Benchmark.Configuration {
    .init(
        metrics: metrics,
        warmupIterations: size >= 1_000_000 ? 1 : 3,
        maxDuration: .seconds(2),
        maxIterations: max(5, min(300, 2_000_000 / size))
    )
}

/// The sizes of the scaling runs (scenario 8).
private let scalingSizes = [1_000, 10_000, 100_000, 1_000_000]

// MARK: - Fixtures

/// A token with `count` outstanding registrations, built in `setup`, outside every measured region.
private final class OutstandingRegistrations: @unchecked Sendable {
    // Sendable: only the benchmark's own thread touches it; setup, the iterations and teardown run one after another.
    let count: Int
    private(set) var request = CancellationRequest()
    var registrations: [CancellationRegistration] = []
    private var generator = SplitMix64(seed: 0x5EED)

    init(count: Int) {
        self.count = count
    }

    func build() {
        oldest = 0
        request = CancellationRequest()
        let token = request.token
        registrations = []
        registrations.reserveCapacity(count)
        for _ in 0..<count {
            registrations.append(token.onCancel {})
        }
    }

    func release() {
        registrations = []
        request = CancellationRequest()
    }

    private var oldest = 0

    /// The indices of the `n` oldest registrations: after `build()` and each replacement round, the
    /// registrations' order in `registrations` is their registration order, starting at `oldest`.
    func oldestIndices(_ n: Int) -> [Int] {
        defer { oldest = (oldest + n) % count }
        return (0..<n).map { (oldest + $0) % count }
    }

    /// `n` distinct indices into `registrations`, spread over the whole slab.
    func randomIndices(_ n: Int) -> [Int] {
        var chosen = Set<Int>(minimumCapacity: n)
        while chosen.count < n {
            chosen.insert(Int(generator.next() % UInt64(count)))
        }
        return Array(chosen)
    }
}

/// `count` slots of 32 bytes (the size of a registration's slot) behind a `Mutex`: the memory floor of a
/// removal at a random place.
private final class RandomSlotFloor: @unchecked Sendable {
    // Sendable: only the benchmark's own thread touches it; setup, the iterations and teardown run one after another.
    struct Slot {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    }

    let count: Int
    private let slots = Mutex<[Slot]>([])
    private var generator = SplitMix64(seed: 0x5EED)

    init(count: Int) {
        self.count = count
    }

    func build() {
        slots.withLock { $0 = Array(repeating: Slot(), count: count) }
    }

    func release() {
        slots.withLock { $0 = [] }
    }

    /// Reads and rewrites slot `index`, as an unlink does.
    func touch(_ index: Int) -> UInt64 {
        slots.withLock { slots in
            slots[index].words.0 &+= 1
            return slots[index].words.1 &+ slots[index].words.0
        }
    }

    func randomIndices(_ n: Int) -> [Int] {
        (0..<n).map { _ in Int(generator.next() % UInt64(count)) }
    }
}

// MARK: - Benchmarks

let benchmarks: @Sendable () -> Void = {
    registerAndUnregister()
    cancelPerHandler()
    unregisterWithOutstandingRegistrations()
    cancelScaling()
    registerOnTokensThatNeedNoStorage()
    sharedTokenContention()  // ContentionBenchmarks.swift: 11
}

// MARK: 5. register + unregister vs withTaskCancellationHandler

private func registerAndUnregister() {
    Benchmark("5 FutureLib: onCancel + unregister", configuration: configuration) { benchmark in
        let request = CancellationRequest()
        let token = request.token
        token.onCancel {}.unregister()  // the slab exists from here on; steady state is what we measure
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let registration = token.onCancel {}
            blackHole(registration.unregister())
        }
        benchmark.stopMeasurement()
        blackHole(request)
    }

    // The same inside a task, to show the async context costs ours nothing.
    Benchmark("5 FutureLib: onCancel + unregister, in a task", configuration: configuration) { benchmark async in
        let request = CancellationRequest()
        let token = request.token
        token.onCancel {}.unregister()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let registration = token.onCancel {}
            blackHole(registration.unregister())
        }
        benchmark.stopMeasurement()
        blackHole(request)
    }

    // The Swift peer: a cancellation handler scope installs and removes a task status record.
    Benchmark("5 Swift: withTaskCancellationHandler scope", configuration: configuration) { benchmark async in
        for _ in benchmark.scaledIterations {
            await withTaskCancellationHandler {
                blackHole(0)
            } onCancel: {
            }
        }
    }
}

// MARK: 6. cancel with 1, 10, 1,000 handlers vs one Mutex lock

private func cancelPerHandler() {
    // Every iteration cancels 1,000 handlers in all: 1,000 requests x 1, 100 x 10, or 1 x 1,000.
    for handlersPerRequest in [1, 10, 1_000] {
        let requestsPerIteration = operationsPerIteration / handlersPerRequest
        Benchmark(
            "6 FutureLib: cancel, \(handlersPerRequest) handler(s) per request",
            configuration: setupHeavyConfiguration
        ) { benchmark in
            var requests: [CancellationRequest] = []
            requests.reserveCapacity(requestsPerIteration)
            for _ in 0..<requestsPerIteration {
                let request = CancellationRequest()
                let token = request.token
                for _ in 0..<handlersPerRequest {
                    token.onCancel {}
                }
                requests.append(request)
            }
            benchmark.startMeasurement()
            for request in requests {
                request.cancel()
            }
            benchmark.stopMeasurement()
            blackHole(requests)  // deallocated after the measured region
        }
    }

    // The floor: one uncontended lock/unlock of the standard library's Mutex.
    Benchmark("6 floor: Mutex.withLock, uncontended", configuration: configuration) { benchmark in
        let mutex = Mutex(0)
        for _ in benchmark.scaledIterations {
            mutex.withLock { $0 &+= 1 }
        }
        blackHole(mutex.withLock { $0 })
    }
}

// MARK: 8. unregister with 10^3 ... 10^6 outstanding registrations

private func unregisterWithOutstandingRegistrations() {
    for outstanding in scalingSizes {
        let fixture = OutstandingRegistrations(count: outstanding)

        // Unregister 1,000 registrations made just now on top of the outstanding ones (hot in cache).
        Benchmark(
            "8 FutureLib: unregister newest, \(outstanding) outstanding",
            configuration: setupHeavyConfiguration
        ) { benchmark in
            let token = fixture.request.token
            var fresh: [CancellationRegistration] = []
            fresh.reserveCapacity(operationsPerIteration)
            for _ in 0..<operationsPerIteration {
                fresh.append(token.onCancel {})
            }
            benchmark.startMeasurement()
            for registration in fresh {
                blackHole(registration.unregister())
            }
            benchmark.stopMeasurement()
        } setup: {
            fixture.build()
        } teardown: {
            fixture.release()
        }

        // Unregister 1,000 registrations picked at random among the outstanding ones (cold in cache for 10^6).
        unregisterAndReplace("random", fixture: fixture) { fixture.randomIndices($0) }

        // Unregister the 1,000 oldest registrations (operations finishing in the order they started); their
        // replacements become the newest, and the next iteration takes the next 1,000.
        unregisterAndReplace("oldest", fixture: fixture) { fixture.oldestIndices($0) }

        // The floor under "unregister random": one read-modify-write of a random 32-byte element (a slot's size)
        // in an array of `outstanding` elements, under an uncontended Mutex, as any structure that removes an
        // entry at a random place must do at least once. Its growth from 10^3 to 10^6 is the memory hierarchy's.
        let floor = RandomSlotFloor(count: outstanding)
        Benchmark(
            "8 floor: random 32-byte slot under a Mutex, \(outstanding) slots",
            configuration: setupHeavyConfiguration
        ) { benchmark in
            let indices = floor.randomIndices(operationsPerIteration)
            benchmark.startMeasurement()
            for index in indices {
                blackHole(floor.touch(index))
            }
            benchmark.stopMeasurement()
        } setup: {
            floor.build()
        } teardown: {
            floor.release()
        }
    }
}

/// A benchmark that unregisters the 1,000 registrations at `pick`'s indices, then registers replacements,
/// unmeasured, so that the number outstanding stays the same.
private func unregisterAndReplace(
    _ pattern: String,
    fixture: OutstandingRegistrations,
    pick: @escaping (Int) -> [Int]
) {
    Benchmark(
        "8 FutureLib: unregister \(pattern), \(fixture.count) outstanding",
        configuration: setupHeavyConfiguration
    ) { benchmark in
        let indices = pick(operationsPerIteration)
        let victims = indices.map { fixture.registrations[$0] }
        benchmark.startMeasurement()
        for registration in victims {
            blackHole(registration.unregister())
        }
        benchmark.stopMeasurement()
        let token = fixture.request.token
        for index in indices {
            fixture.registrations[index] = token.onCancel {}
        }
    } setup: {
        fixture.build()
    } teardown: {
        fixture.release()
    }
}

// MARK: 8. cancel with 10^3 ... 10^6 handlers on one request (per-handler cost should not grow with N)

private func cancelScaling() {
    for size in scalingSizes {
        Benchmark(
            "8 FutureLib: cancel, \(size) handlers",
            configuration: scalingConfiguration(size: size)
        ) { benchmark in
            let request = CancellationRequest()
            let token = request.token
            for _ in 0..<size {
                token.onCancel {}
            }
            benchmark.startMeasurement()
            request.cancel()
            benchmark.stopMeasurement()
        }
    }
}

// MARK: Extras: onCancel on .none and .cancelled: nothing stored, nothing allocated

private func registerOnTokensThatNeedNoStorage() {
    Benchmark("x FutureLib: onCancel on .none", configuration: configuration) { benchmark in
        let token = CancellationToken.none
        for _ in benchmark.scaledIterations {
            blackHole(token.onCancel {})
        }
    }

    Benchmark("x FutureLib: onCancel on .cancelled (runs at once)", configuration: configuration) { benchmark in
        let token = CancellationToken.cancelled
        for _ in benchmark.scaledIterations {
            blackHole(token.onCancel {})
        }
    }
}
