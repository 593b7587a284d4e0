// swift-tools-version: 6.2
import PackageDescription

// CI's allocation gate (`make bench-thresholds`), a package of its own so that CI builds nothing but the root package
// for it: the benchmarks package around it also resolves and builds SwiftNIO and the benchmark harness's plugin tools,
// which took CI minutes before the first line of FutureLib compiled.
let package = Package(
    name: "AllocationCheck",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        // For the benchmarks package's RoundsDriver, which counts mallocs the same way.
        .library(name: "MallocCounter", targets: ["MallocCounter"])
    ],
    dependencies: [
        // `name:` pins the identity, so `package: "FutureLib"` below works whatever the checkout folder is called.
        .package(name: "FutureLib", path: "../..")
    ],
    targets: [
        // Mallocs per operation of the hot paths (HotPaths and the multi-threaded ones) against
        // ../Thresholds/allocations.json.
        .executableTarget(
            name: "AllocationCheck",
            dependencies: [
                .product(name: "Cancellation", package: "FutureLib"),
                .product(name: "FutureLib", package: "FutureLib"),
                "HotPaths",
                "MallocCounter",
            ],
            path: "AllocationCheck"
        ),
        // The instruction gate (`make bench-instructions`): one hot path per run, for valgrind's callgrind.
        .executableTarget(name: "InstructionCheck", dependencies: ["HotPaths"], path: "InstructionCheck"),
        // The single-thread hot paths both gates measure, defined once so that a path added is gated by both.
        .target(
            name: "HotPaths",
            dependencies: [
                .product(name: "Cancellation", package: "FutureLib"),
                .product(name: "FutureLib", package: "FutureLib"),
            ],
            path: "HotPaths"
        ),
        // Counts the process's mallocs: an executable that links it interposes `malloc` and friends (glibc only).
        .target(name: "MallocCounter", path: "MallocCounter"),
    ]
)
