// swift-tools-version: 6.2
import PackageDescription

// The benchmarks live in their own package (as in swift-collections and swift-nio) so that the root package keeps
// no dependencies at all: ordo-one/benchmark and swift-nio are needed only here.
// The products several targets below use, named once.
let futureLib: Target.Dependency = .product(name: "FutureLib", package: "FutureLib")
let cancellation: Target.Dependency = .product(name: "Cancellation", package: "FutureLib")
let benchmark: Target.Dependency = .product(name: "Benchmark", package: "benchmark")
let benchmarkPlugin: Target.PluginUsage = .plugin(name: "BenchmarkPlugin", package: "benchmark")
/// The peer for futures: NIO's `EventLoopFuture`, on an embedded event loop.
let nioFutures: [Target.Dependency] = [
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOEmbedded", package: "swift-nio"),
]
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")

let package = Package(
    name: "FutureLibBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        // `name:` pins the identity, so `package: "FutureLib"` below works whatever the checkout folder is called.
        .package(name: "FutureLib", path: ".."),
        // The interposer counts mallocs (`mallocCountTotal`); 1.38.1 needs the trait named on the dependency.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // The peer for futures: NIO's EventLoopFuture, measured in the same run.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        // The peer for the stream operators (StreamOperatorsDriver), as in Tests/StreamOracle.
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
        // CI's allocation gate, a package of its own (Allocations/); RoundsDriver takes its malloc counter from it.
        .package(name: "AllocationCheck", path: "Allocations"),
    ],
    targets: [
        // One executable per module, at Benchmarks/<Name>/<Name>.swift (the benchmark plugin's convention).
        .executableTarget(
            name: "CancellationBenchmarks",
            dependencies: [
                benchmark,
                cancellation,
                "BenchmarkSupport",
            ],
            path: "Benchmarks/CancellationBenchmarks",
            plugins: [benchmarkPlugin]
        ),
        .executableTarget(
            name: "FutureLibBenchmarks",
            dependencies: [
                benchmark,
                futureLib,
                nioPosix,
            ] + nioFutures,
            path: "Benchmarks/FutureLibBenchmarks",
            plugins: [benchmarkPlugin]
        ),
        // Not a benchmark: a plain release driver for `valgrind --tool=callgrind`, which counts instructions
        // reproducibly on a noisy machine (Scripts/bench-report.py --callgrind runs it; see Callgrind/README.md).
        .executableTarget(
            name: "CallgrindDriver",
            dependencies: [
                futureLib,
                "MallocInfo",
                "BenchmarkSupport",
            ] + nioFutures,
            path: "Callgrind/CallgrindDriver"
        ),
        // What several benchmark executables share (a deterministic random generator).
        .target(name: "BenchmarkSupport", path: "Support/BenchmarkSupport"),
        // `mallinfo2()` for the driver's bytes-per-pending-promise scenario (Swift's Glibc module lacks <malloc.h>).
        .target(name: "MallocInfo", path: "Callgrind/MallocInfo"),
        // Not a benchmark either: the multi-threaded scenarios in alternating rounds, FutureLib and its
        // peer in one process, reporting median ratios (the way to compare on a shared, noisy machine).
        .executableTarget(
            name: "RoundsDriver",
            dependencies: [
                cancellation,
                futureLib,
                nioPosix,
                .product(name: "MallocCounter", package: "AllocationCheck"),
                "MallocInfo",
            ] + nioFutures,
            path: "Rounds/RoundsDriver"
        ),
        // Not a benchmark: scenario 9 (async closures) timed by a plain release driver, medians over alternating
        // rounds, wall-clock or process CPU time (the harness cannot alternate two implementations).
        .executableTarget(
            name: "AsyncTimingDriver",
            dependencies: [futureLib],
            path: "Timing/AsyncTimingDriver"
        ),
        // Not a benchmark: the stream operators (merge, combineLatest, debounce, removeDuplicates, chunks) against
        // swift-async-algorithms over AsyncStream in alternating rounds, and heap bytes per live stage.
        .executableTarget(
            name: "StreamOperatorsDriver",
            dependencies: [
                futureLib,
                "MallocInfo",
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            path: "Streams/StreamOperatorsDriver"
        ),
    ]
)
