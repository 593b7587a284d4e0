// swift-tools-version: 6.2
// Differential tests of FutureLib's stream operators against swift-async-algorithms, the
// oracle: seeded random schedules of values, failures, finishes and clock advances are fed to
// both, and their outputs compared. A package of its own, so that the root package keeps no
// dependency. Run it with `make stream-oracle`.
import PackageDescription

let package = Package(
    name: "StreamOracle",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "FutureLib", path: "../.."),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
    ],
    targets: [
        .testTarget(
            name: "StreamOracleTests",
            dependencies: [
                .product(name: "FutureLib", package: "FutureLib"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ]
        )
    ]
)
