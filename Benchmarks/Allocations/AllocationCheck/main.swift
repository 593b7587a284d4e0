// The allocation gate of CI (`make bench-thresholds`): counts the mallocs per operation of the hot paths in a release
// build and fails when one exceeds its committed threshold (Benchmarks/Thresholds/allocations.json), so a change that
// adds an allocation to a hot path fails CI. Malloc counts are deterministic where wall-clock times are not, so only
// counts gate; times stay in `make bench-report`.
//
//     AllocationCheck            check every scenario against the thresholds file (exit 1 on a regression)
//     AllocationCheck --update   measure and rewrite the thresholds file (`make bench-thresholds-update`)
//
// The counts are every allocation of the process while a path runs (the Swift runtime's and Dispatch's included), by
// the `malloc` wrappers of ../MallocCounter. The single-thread hot paths are ../HotPaths, which the instruction gate
// (InstructionCheck) runs too; the paths here need another thread or `await`.

import Cancellation
import Dispatch
import FutureLib
import HotPaths
import MallocCounter

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The serial queue of the `queue-…` scenarios.
let serialQueue = DispatchQueue(label: "allocation-check.serial")

/// A path that needs another thread or `await` (so not one of ../HotPaths, which the instruction gate runs too):
/// `run(operations)` does `operations` of it.
struct Scenario {
    var key: String
    var description: String
    var operations: Int
    /// How far above its threshold a count may go: the runtime's and Dispatch's occasional allocations on the other
    /// threads. One allocation more per operation always exceeds it.
    var tolerance: Double
    /// Counted runs; the least count is kept.
    var runs = 5
    var run: (Int) async throws -> Void
}

/// How far above its threshold a hot path's count may go: these are exact, and one allocation more per operation
/// always exceeds it.
let hotPathTolerance = 0.05

/// The serial context of `limited-execute`, on `.default`.
let serialContext = LimitedExecutionContext(maxConcurrency: 1)

let scenarios: [Scenario] = [
    Scenario(
        key: "queue-execute",
        description: "a job submitted to a serial DispatchQueue as an ExecutionContext, run (per job)",
        operations: 10_000,
        tolerance: 0.3
    ) { count in
        for _ in 0..<count { serialQueue.execute { sink(0) } }
        serialQueue.sync {}
    },
    Scenario(
        key: "queue-continuation",
        description: "a promise, one continuation on a serial DispatchQueue, fulfilled, run (per promise)",
        operations: 10_000,
        tolerance: 0.3
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
        tolerance: 0.3
    ) { count in
        for _ in 0..<count { serialContext.execute { sink(0) } }
        // Serial: the last job runs after every other.
        await withCheckedContinuation { continuation in serialContext.execute { continuation.resume() } }
    },
    // One future per counted run, and the least count kept. `value()` either finds the future completed or suspends
    // until it is, which allocates more, and which of the two happens depends on how the threads are scheduled: on
    // a loaded machine most awaits suspend, so a count over many futures moves with the load. The least count of
    // single futures is the path itself (the future, its task, the completion), which an allocation added to it
    // raises for every future, so it stays exact; an allocation added only where the await suspends is not gated
    // here (an average over many futures would not catch it either on an idle machine, where few suspend).
    Scenario(
        key: "future-async",
        description: "Future { async }, awaited (per future)",
        operations: 1,
        tolerance: 0.05,
        runs: 2_000
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

/// Mallocs per operation of a hot path, counted as the instruction gate counts instructions: (M(2n) − M(n)) / n, so
/// that what the path sets up once (a long-lived token, 1,000 pending subscriptions) cancels out. An uncounted run
/// first keeps the one-time costs (slabs, first use) out of M(n).
func mallocsPerOperation(_ path: HotPath) -> Double {
    func mallocs(_ operations: Int) -> Double {
        malloc_counter_start()
        path.run(operations)
        return Double(malloc_counter_stop())
    }
    path.run(path.operations)
    let once = mallocs(path.operations)
    return (mallocs(2 * path.operations) - once) / Double(path.operations)
}

/// Mallocs per operation of a multi-threaded path: the least of its counted runs (an allocation added to the path
/// raises every run, the runtime's and Dispatch's occasional ones only some). An uncounted run first keeps one-time
/// costs (slabs, pool threads) out.
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

var measured: [(key: String, description: String, mallocs: Double, tolerance: Double)] = hotPaths.map { path in
    (path.key, path.description, mallocsPerOperation(path), hotPathTolerance)
}
measured.append(
    (
        "cancel-per-handler", "cancel() of a request with 1,000 handlers (per handler)", cancelPerHandler(),
        hotPathTolerance
    )
)
for scenario in scenarios {
    measured.append((scenario.key, scenario.description, try await mallocsPerOperation(scenario), scenario.tolerance))
}

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
