// swift-tools-version: 6.2
import PackageDescription

// The integrations live in their own package (like Benchmarks/) so that the root package keeps no dependencies
// at all: SwiftNIO, AsyncHTTPClient and swift-service-lifecycle are needed only by those who opt in.
// The root package's settings list, so the adapters build under the same rules as the library.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    .treatWarning("ExplicitSendable", as: .warning),
]

let package = Package(
    name: "FutureLibIntegrations",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "FutureLibNIO", targets: ["FutureLibNIO"]),
        .library(name: "FutureLibAsyncHTTPClient", targets: ["FutureLibAsyncHTTPClient"]),
        .library(name: "FutureLibServiceLifecycle", targets: ["FutureLibServiceLifecycle"]),
        .library(name: "FutureLibHummingbird", targets: ["FutureLibHummingbird"]),
    ],
    dependencies: [
        // `name:` pins the identity, so `package: "FutureLib"` below works whatever the checkout folder is called.
        .package(name: "FutureLib", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // No traits: Hummingbird's default ones add swift-configuration and full Foundation, which nothing here
        // uses (a client's own Hummingbird dependency still gets its defaults: traits are unified).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "FutureLibNIO",
            dependencies: [
                .product(name: "FutureLib", package: "FutureLib"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FutureLibAsyncHTTPClient",
            dependencies: [
                "FutureLibNIO",
                .product(name: "FutureLib", package: "FutureLib"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FutureLibServiceLifecycle",
            dependencies: [
                // Tokens only: code that knows nothing of futures can use it.
                .product(name: "Cancellation", package: "FutureLib"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FutureLibHummingbird",
            dependencies: [
                "FutureLibServiceLifecycle",
                .product(name: "Cancellation", package: "FutureLib"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Not a product: the loopback HTTP/1.1 server the tests and the demo run against (fast, slow head,
        // slow body), which counts the connections it sees open and close.
        .target(
            name: "IntegrationsTestSupport",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "DemoServer",
            dependencies: [
                "FutureLibAsyncHTTPClient",
                "FutureLibServiceLifecycle",
                "IntegrationsTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibNIOTests",
            dependencies: [
                "FutureLibNIO",
                .product(name: "NIOPosix", package: "swift-nio"),
                // NIO's lock, which ThreadSanitizer sees (the standard library's `Mutex` it does not, on Linux).
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibAsyncHTTPClientTests",
            dependencies: [
                "FutureLibAsyncHTTPClient",
                "IntegrationsTestSupport",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibServiceLifecycleTests",
            dependencies: [
                "FutureLibServiceLifecycle",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // `make integrations-soak`: the Hummingbird integration under keep-alive load, checking the resident set.
        .executableTarget(
            name: "HummingbirdSoak",
            dependencies: [
                "FutureLibHummingbird",
                "FutureLibAsyncHTTPClient",
                "IntegrationsTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibHummingbirdTests",
            dependencies: [
                "FutureLibHummingbird",
                "FutureLibAsyncHTTPClient",
                "IntegrationsTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The code of Documentation/ServerSideSwift.md, compiled and run.
        .testTarget(
            name: "IntegrationsDocumentationExamples",
            dependencies: [
                "FutureLibAsyncHTTPClient",
                "FutureLibHummingbird",
                .product(name: "Hummingbird", package: "hummingbird"),
                "FutureLibServiceLifecycle",
                "IntegrationsTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
