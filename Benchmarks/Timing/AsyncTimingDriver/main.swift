// A plain release driver for scenario 9 (an async closure in a combinator), timed without the benchmark harness:
// medians over alternating rounds, so that the machine's load drifts over every variant alike.
//
//     swift run -c release AsyncTimingDriver [operations per round, default 2000] [cpu]
//
// `cpu` measures the process's CPU time (user + system, all threads) instead of wall-clock time: on a loaded
// machine it counts the work done rather than the time spent waiting for a core.

import Dispatch
import FutureLib

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@inline(never) func blackHole<T>(_ value: T) { _ = value }

func processCPUNanoseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF_VALUE, &usage)
    let seconds = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    let microseconds = Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    return seconds * 1e9 + microseconds * 1e3
}

#if canImport(Glibc)
let RUSAGE_SELF_VALUE = __rusage_who_t(0)
#else
let RUSAGE_SELF_VALUE = RUSAGE_SELF
#endif

let arguments = CommandLine.arguments.dropFirst()
let operations = arguments.compactMap { Int($0) }.first ?? 2_000
let measuresCPU = arguments.contains("cpu")

func now() -> Double {
    measuresCPU ? processCPUNanoseconds() : Double(DispatchTime.now().uptimeNanoseconds)
}

/// Nanoseconds per operation of `body`, run `count` times.
func measure(_ count: Int, _ body: () async throws -> Void) async rethrows -> Double {
    let start = now()
    for _ in 0..<count { try await body() }
    return (now() - start) / Double(count)
}

let completed = Future(value: 1)
let variants: [(name: String, body: () async throws -> Void)] = [
    (
        "async map on a completed future, awaited",
        { blackHole(try await completed.map { value async in value + 1 }.value()) }
    ),
    ("Future { async }, awaited", { blackHole(try await Future { () async throws -> Int in 2 }.value()) }),
    ("Task { }, awaited", { blackHole(await Task { 2 }.value) }),
    ("synchronous map on a completed future, awaited", { blackHole(try await completed.map { $0 + 1 }.value()) }),
]

for variant in variants { _ = try await measure(200, variant.body) }  // warm-up
let rounds = 15
var samples = Array(repeating: [Double](), count: variants.count)
for round in 0..<rounds {
    let order = round.isMultiple(of: 2) ? Array(variants.indices) : variants.indices.reversed()
    for index in order { samples[index].append(try await measure(operations, variants[index].body)) }
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let medians = samples.map(median)
print("\(measuresCPU ? "CPU" : "wall-clock") ns per operation, median of \(rounds) rounds of \(operations):")
for (index, variant) in variants.enumerated() {
    print("  \(variant.name): \(Int(medians[index]))")
}
print("async map / Future { async }: \(medians[0] / medians[1])  (target <= 1.5)")
print("Future { async } / Task: \(medians[1] / medians[2])")
