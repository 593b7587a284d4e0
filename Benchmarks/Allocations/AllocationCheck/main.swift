// The allocation gate of CI (`make bench-thresholds`): counts the mallocs per operation of the hot paths in a release
// build and fails when one exceeds its committed threshold (Benchmarks/Thresholds/allocations.json), so a change that
// adds an allocation to a hot path fails CI. Malloc counts are deterministic where wall-clock times are not, so only
// counts gate; times stay in `make bench-report`.
//
//     AllocationCheck            check every scenario against the thresholds file (exit 1 on a regression)
//     AllocationCheck --update   measure and rewrite the thresholds file (`make bench-thresholds-update`)
//
// The counts are every allocation of the process while a scenario runs (the Swift runtime's and Dispatch's
// included), by the `malloc` wrappers of ../MallocCounter. Each scenario runs once uncounted first, so that one-time
// costs (slabs, pool threads) stay out, then `operations` times counted; the multi-threaded ones take the least of
// several counted runs (an allocation added to the path raises every run, the runtime's occasional ones only some).

import Cancellation
import Dispatch
import FutureLib
import MallocCounter

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Keeps the optimizer from dropping a value, at the cost of one call.
@inline(never)
func sink(_ value: Int) {
    if value == -1 { print(value) }
}

/// The serial queue of the `queue-…` scenarios.
let serialQueue = DispatchQueue(label: "allocation-check.serial")

/// One hot path: `run(operations)` does `operations` of it.
struct Scenario {
    var key: String
    var description: String
    var operations: Int
    /// How far above its threshold a count may go. One allocation more per operation always exceeds it; the
    /// multi-threaded paths get more room for the runtime's and Dispatch's occasional allocations.
    var tolerance: Double
    /// Counted runs; the least count is kept.
    var runs = 1
    var run: (Int) async throws -> Void
}

/// The serial context of `limited-execute`, on `.default`.
let serialContext = LimitedExecutionContext(maxConcurrency: 1)

/// The long-lived source of `linked-request` (a server's shutdown token): it outlives every request linked to it.
let longLived = CancellationRequest()

let scenarios: [Scenario] = [
    Scenario(
        key: "promise-continuation-fulfil",
        description: "a promise, one continuation on .synchronous, fulfilled (per promise)",
        operations: 10_000,
        tolerance: 0.05
    ) { count in
        for _ in 0..<count {
            let promise = Promise<Int>()
            promise.future.onSuccess(on: .synchronous) { sink($0) }
            promise.fulfill(1)
        }
    },
    Scenario(
        key: "map-chain-10",
        description: "ten maps on a pending promise, one continuation, fulfilled (per chain)",
        operations: 2_000,
        tolerance: 0.05
    ) { count in
        for _ in 0..<count {
            let promise = Promise<Int>()
            var future = promise.future
            for _ in 0..<10 { future = future.map(on: .synchronous) { $0 &+ 1 } }
            future.onSuccess(on: .synchronous) { sink($0) }
            promise.fulfill(1)
        }
    },
    Scenario(
        key: "map-with-token",
        description: "a map with a live token on a pending promise, fulfilled (per promise and map)",
        operations: 10_000,
        tolerance: 0.05
    ) { count in
        let token = longLived.token
        for _ in 0..<count {
            let promise = Promise<Int>()
            let mapped = promise.future.map(on: .synchronous, cancellationToken: token) { $0 &+ 1 }
            promise.fulfill(1)
            if mapped.isCompleted == false { sink(-1) }
        }
    },
    Scenario(
        key: "token-register-unregister",
        description: "onCancel + unregister() on one live token (per pair)",
        operations: 100_000,
        tolerance: 0.05
    ) { count in
        let request = CancellationRequest()
        let token = request.token
        for _ in 0..<count {
            if !token.onCancel({}).unregister() { sink(-1) }
        }
    },
    Scenario(
        key: "token-register-none-or-cancelled",
        description: "onCancel on .none and on .cancelled: nothing stored (per pair)",
        operations: 100_000,
        tolerance: 0.05
    ) { count in
        for _ in 0..<count {
            CancellationToken.none.onCancel { sink(-1) }
            CancellationToken.cancelled.onCancel { sink(0) }
        }
    },
    Scenario(
        key: "request-with-handlers",
        description: "a request, 10 handlers registered, cancel() (per request)",
        operations: 10_000,
        tolerance: 0.05
    ) { count in
        for _ in 0..<count {
            let request = CancellationRequest()
            let token = request.token
            for _ in 0..<10 { token.onCancel { sink(0) } }
            request.cancel()
        }
    },
    Scenario(
        key: "linked-request",
        description: "a client request and a request linked to it and a long-lived token, released (per request)",
        operations: 10_000,
        tolerance: 0.05
    ) { count in
        for _ in 0..<count {
            let client = CancellationRequest()
            let request = CancellationRequest(linkedTo: [longLived.token, client.token])
            if request.isCancellationRequested { sink(-1) }
        }
    },
    Scenario(
        key: "cancel-chain-with-token",
        description:
            "a client cancels a request linked to it and a long-lived token, with a map and a flatMap on its token "
            + "(per request, its making included)",
        operations: 10_000,
        tolerance: 0.05
    ) { count in
        for _ in 0..<count {
            let client = CancellationRequest()
            let request = CancellationRequest(linkedTo: [longLived.token, client.token])
            let promise = Promise<Int>()
            let rendered = promise.future
                .map(on: .synchronous, cancellationToken: request.token) { $0 &+ 1 }
                .flatMap(on: .synchronous, cancellationToken: request.token) { Future(value: $0) }
            client.cancel()
            if rendered.isCompleted == false { sink(-1) }
        }
    },
    Scenario(
        key: "request-deadline",
        description: "a request with a deadline (cancel(after:) on the system clock), released before it (per request)",
        operations: 10_000,
        tolerance: 0.05
    ) { count in
        for _ in 0..<count {
            let request = CancellationRequest()
            request.cancel(after: .seconds(3_600))
            if request.isCancellationRequested { sink(-1) }
        }
    },
    Scenario(
        key: "stream-publish",
        description: "a value sent on a StreamPromise to one .synchronous subscriber (per value)",
        operations: 100_000,
        tolerance: 0.05
    ) { count in
        let promise = StreamPromise<Int>(capacity: 0)
        promise.stream.onSuccess(on: .synchronous) { sink($0) }
        for value in 0..<count { promise.fulfill(value) }
        promise.finish()
    },
    Scenario(
        key: "queue-execute",
        description: "a job submitted to a serial DispatchQueue as an ExecutionContext, run (per job)",
        operations: 10_000,
        tolerance: 0.3,
        runs: 5
    ) { count in
        for _ in 0..<count { serialQueue.execute { sink(0) } }
        serialQueue.sync {}
    },
    Scenario(
        key: "queue-continuation",
        description: "a promise, one continuation on a serial DispatchQueue, fulfilled, run (per promise)",
        operations: 10_000,
        tolerance: 0.3,
        runs: 5
    ) { count in
        for _ in 0..<count {
            let promise = Promise<Int>()
            promise.future.onSuccess(on: serialQueue) { sink($0) }
            promise.fulfill(1)
        }
        serialQueue.sync {}
    },
    Scenario(
        key: "queue-continuation-completed-with-token",
        description:
            "a continuation on a serial DispatchQueue registered on a completed future with a live token, run (per continuation)",
        operations: 10_000,
        tolerance: 0.3,
        runs: 5
    ) { count in
        let completed = Future(value: 1)
        let request = CancellationRequest()  // live through the run: every continuation checks it
        let token = request.token
        for _ in 0..<count { completed.onSuccess(on: serialQueue, cancellationToken: token) { sink($0) } }
        serialQueue.sync {}
        withExtendedLifetime(request) {}
    },
    Scenario(
        key: "limited-execute",
        description: "a job submitted to a LimitedExecutionContext(maxConcurrency: 1) on .default, run (per job)",
        operations: 10_000,
        tolerance: 0.3,
        runs: 5
    ) { count in
        for _ in 0..<count { serialContext.execute { sink(0) } }
        // Serial: the last job runs after every other.
        await withCheckedContinuation { continuation in serialContext.execute { continuation.resume() } }
    },
    Scenario(
        key: "future-async",
        description: "Future { async }, awaited (per future)",
        operations: 2_000,
        tolerance: 0.9,
        runs: 5
    ) { count in
        for _ in 0..<count { sink(try await Future { () async throws -> Int in 2 }.value()) }
    },
]

/// `cancel()` per handler is measured apart: its handlers are registered before counting starts.
func cancelPerHandler() -> Double {
    let requests = 10
    let handlers = 1_000
    func prepare() -> [CancellationRequest] {
        let pending = (0..<requests).map { _ in CancellationRequest() }
        for request in pending {
            let token = request.token
            for _ in 0..<handlers { token.onCancel { sink(0) } }
        }
        return pending
    }
    for request in prepare() { request.cancel() }
    let pending = prepare()
    malloc_counter_start()
    for request in pending { request.cancel() }
    return Double(malloc_counter_stop()) / Double(requests * handlers)
}

func mallocsPerOperation(_ scenario: Scenario) async throws -> Double {
    try await scenario.run(scenario.operations)
    var counts: [Double] = []
    for _ in 0..<scenario.runs {
        malloc_counter_start()
        try await scenario.run(scenario.operations)
        counts.append(Double(malloc_counter_stop()) / Double(scenario.operations))
    }
    return counts.min() ?? 0
}

// MARK: - Main

guard malloc_counter_is_available() != 0 else {
    print("AllocationCheck: mallocs cannot be counted on this platform (glibc only); nothing checked")
    exit(0)
}

let update = CommandLine.arguments.contains("--update")
// The file this checks: Benchmarks/Thresholds/allocations.json, found from this source file's place so that the check
// runs from any directory.
let thresholdsPath = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appending(path: "Thresholds/allocations.json")

var measured: [(key: String, description: String, mallocs: Double, tolerance: Double)] = []
for scenario in scenarios {
    measured.append((scenario.key, scenario.description, try await mallocsPerOperation(scenario), scenario.tolerance))
}
measured.insert(
    ("cancel-per-handler", "cancel() of a request with 1,000 handlers (per handler)", cancelPerHandler(), 0.05),
    at: 5
)

/// Two decimals: what the file keeps.
func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }

if update {
    let thresholds = Dictionary(uniqueKeysWithValues: measured.map { ($0.key, rounded($0.mallocs)) })
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try FileManager.default.createDirectory(
        at: thresholdsPath.deletingLastPathComponent(),
        withIntermediateDirectories: true
    )
    try (encoder.encode(thresholds) + Data("\n".utf8)).write(to: thresholdsPath)
    for entry in measured { print("\(entry.key): \(rounded(entry.mallocs)) mallocs per operation") }
    print("wrote \(thresholdsPath.path)")
    exit(0)
}

guard let saved = try? Data(contentsOf: thresholdsPath) else {
    print("FAIL no thresholds at \(thresholdsPath.path): run make bench-thresholds-update and commit the file")
    exit(1)
}
let thresholds = try JSONDecoder().decode([String: Double].self, from: saved)
var failures = 0
for entry in measured {
    let count = rounded(entry.mallocs)
    guard let threshold = thresholds[entry.key] else {
        print("FAIL \(entry.key): \(count) mallocs per operation, no threshold (run make bench-thresholds-update)")
        failures += 1
        continue
    }
    let verdict: String
    if entry.mallocs > threshold + entry.tolerance {
        verdict = "FAIL"
        failures += 1
    } else if entry.mallocs < threshold - entry.tolerance {
        verdict = "LOWER (lock it in with make bench-thresholds-update)"
    } else {
        verdict = "ok"
    }
    print("\(verdict) \(entry.key): \(count) mallocs per operation, threshold \(threshold) — \(entry.description)")
}
for key in thresholds.keys.sorted() where !measured.contains(where: { $0.key == key }) {
    print("note: \(key) has a threshold but no scenario; make bench-thresholds-update drops it")
}
if failures > 0 {
    print(
        "AllocationCheck: \(failures) hot path(s) allocate more than their threshold. If that is intended, "
            + "run make bench-thresholds-update and commit Benchmarks/Thresholds/allocations.json with the reason "
            + "(Documentation/Performance.md, \"Allocation thresholds\")."
    )
    exit(1)
}
print("AllocationCheck: \(measured.count) hot paths within their thresholds")
