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

// The products the targets below share, named once.
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioConcurrencyHelpers: Target.Dependency = .product(name: "NIOConcurrencyHelpers", package: "swift-nio")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let serviceLifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let serviceLifecycleTestKit: Target.Dependency = .product(
    name: "ServiceLifecycleTestKit",
    package: "swift-service-lifecycle"
)
let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird")
let grpcCore: Target.Dependency = .product(name: "GRPCCore", package: "grpc-swift-2")
let grpcHTTP2: Target.Dependency = .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport")
let asyncHTTPClient: Target.Dependency = .product(name: "AsyncHTTPClient", package: "async-http-client")
let vapor: Target.Dependency = .product(name: "Vapor", package: "vapor")
/// HTTP/1.1 on loopback sockets: what the test server, the tests and the executables run on.
let nioHTTP: [Target.Dependency] = [
    .product(name: "NIOPosix", package: "swift-nio"),
    .product(name: "NIOHTTP1", package: "swift-nio"),
]
/// A Hummingbird application under an AsyncHTTPClient client, with the test server as its upstream: what the
/// Hummingbird tests and the soak share.
let hummingbirdUnderLoad: [Target.Dependency] = [
    "FutureLibHummingbird",
    "FutureLibAsyncHTTPClient",
    "IntegrationsTestSupport",
    hummingbird,
    asyncHTTPClient,
    nioCore,
]

let package = Package(
    name: "FutureLibIntegrations",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "FutureLibNIO", targets: ["FutureLibNIO"]),
        .library(name: "FutureLibAsyncHTTPClient", targets: ["FutureLibAsyncHTTPClient"]),
        .library(name: "FutureLibServiceLifecycle", targets: ["FutureLibServiceLifecycle"]),
        .library(name: "FutureLibHummingbird", targets: ["FutureLibHummingbird"]),
        .library(name: "FutureLibVapor", targets: ["FutureLibVapor"]),
        .library(name: "FutureLibGRPC", targets: ["FutureLibGRPC"]),
        .library(name: "FutureLibHTTPDeadline", targets: ["FutureLibHTTPDeadline"]),
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
        // Vapor brings its own dependencies (swift-crypto, swift-nio-ssl, swift-certificates, multipart-kit, …): what it
        // adds to a from-scratch build is in README.md.
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        // For the tests and the demo only: the HTTP/2 transport on loopback (its Posix half links swift-nio-ssl,
        // which AsyncHTTPClient builds anyway).
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
    ],
    targets: [
        .target(
            name: "FutureLibNIO",
            dependencies: [
                .product(name: "FutureLib", package: "FutureLib"),
                nioCore,
            ],
            swiftSettings: swiftSettings
        ),
        // The deadline headers (`Connect-Timeout-Ms`, `grpc-timeout`): their grammars and the token's time left.
        // No NIO, no HTTP library: the client and server adapters, a Vapor adapter, the gRPC interceptors and the
        // fuzz target (`make fuzz-deadline-header`, which compiles its grammar files alone) share it.
        .target(
            name: "FutureLibHTTPDeadline",
            dependencies: [
                .product(name: "Cancellation", package: "FutureLib")
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FutureLibAsyncHTTPClient",
            dependencies: [
                "FutureLibHTTPDeadline",
                "FutureLibNIO",
                .product(name: "FutureLib", package: "FutureLib"),
                asyncHTTPClient,
                nioCore,
                // `HTTPHeaders`' members, to write the deadline header.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                logging,
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FutureLibServiceLifecycle",
            dependencies: [
                // Tokens only: code that knows nothing of futures can use it.
                .product(name: "Cancellation", package: "FutureLib"),
                serviceLifecycle,
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FutureLibHummingbird",
            dependencies: [
                "FutureLibHTTPDeadline",
                "FutureLibServiceLifecycle",
                .product(name: "Cancellation", package: "FutureLib"),
                hummingbird,
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                nioCore,
                nioConcurrencyHelpers,
                serviceLifecycle,
            ],
            swiftSettings: swiftSettings
        ),
        // C: the thread-local that FutureLibVapor's reading observer lives in (Swift cannot name one).
        .target(name: "FutureLibVaporReadingSlot"),
        // Vapor's server with a client-disconnect observer on each connection, and a token per request.
        .target(
            name: "FutureLibVapor",
            dependencies: [
                "FutureLibServiceLifecycle",
                "FutureLibHTTPDeadline",
                "FutureLibVaporReadingSlot",
                .product(name: "Cancellation", package: "FutureLib"),
                vapor,
                nioCore,
                nioConcurrencyHelpers,
                .product(name: "NIOHTTP1", package: "swift-nio"),
                logging,
            ],
            swiftSettings: swiftSettings
        ),
        // A token per RPC on grpc-swift-2: server and client interceptors, propagation through a task-local.
        .target(
            name: "FutureLibGRPC",
            dependencies: [
                "FutureLibHTTPDeadline",
                "FutureLibServiceLifecycle",
                .product(name: "Cancellation", package: "FutureLib"),
                grpcCore,
                serviceLifecycle,
            ],
            swiftSettings: swiftSettings
        ),
        // Not a product: the loopback HTTP/1.1 server the tests and the demo run against (fast, slow head,
        // slow body), which counts the connections it sees open and close, and the upstream call a proxying
        // route makes to it.
        .target(
            name: "IntegrationsTestSupport",
            dependencies: [
                "FutureLibAsyncHTTPClient",
                .product(name: "Cancellation", package: "FutureLib"),
                asyncHTTPClient,
                hummingbird,
                .product(name: "HummingbirdCore", package: "hummingbird"),
                serviceLifecycle,
                logging,
                nioCore,
                nioConcurrencyHelpers,
            ] + nioHTTP,
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "DemoServer",
            dependencies: [
                "FutureLibAsyncHTTPClient",
                "FutureLibServiceLifecycle",
                "IntegrationsTestSupport",
                serviceLifecycle,
                logging,
            ] + nioHTTP,
            swiftSettings: swiftSettings
        ),
        // `make demo-services`: an HTTP edge (Hummingbird), a gRPC middle and a gRPC leaf as separate processes on
        // loopback, and a client; one executable, the role its first argument (Scripts/demo-services.sh).
        // Not a product: the unary UTF-8 gRPC service that DemoServices and GRPCCancellationBenchmark run.
        .target(
            name: "GRPCWorkService",
            dependencies: [grpcCore],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "DemoServices",
            dependencies: [
                "FutureLibGRPC",
                "GRPCWorkService",
                "FutureLibHummingbird",
                "FutureLibAsyncHTTPClient",
                .product(name: "FutureLib", package: "FutureLib"),
                .product(name: "Cancellation", package: "FutureLib"),
                grpcCore,
                grpcHTTP2,
                hummingbird,
                .product(name: "HummingbirdCore", package: "hummingbird"),
                asyncHTTPClient,
                nioCore,
                .product(name: "NIOHTTP1", package: "swift-nio"),
                serviceLifecycle,
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                logging,
            ],
            swiftSettings: swiftSettings
        ),
        // `make bench-grpc`: a unary call with FutureLibGRPC against plain grpc-swift-2 (time, allocations), and a
        // client's cancel reaching the third server down a chain. GRPCMallocCounter interposes malloc for it alone.
        .target(name: "GRPCMallocCounter"),
        .executableTarget(
            name: "GRPCCancellationBenchmark",
            dependencies: [
                "FutureLibGRPC",
                "GRPCWorkService",
                "GRPCMallocCounter",
                .product(name: "Cancellation", package: "FutureLib"),
                grpcCore,
                grpcHTTP2,
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibNIOTests",
            dependencies: [
                "FutureLibNIO",
                .product(name: "NIOPosix", package: "swift-nio"),
                // NIO's lock, which ThreadSanitizer sees (the standard library's `Mutex` it does not, on Linux).
                nioConcurrencyHelpers,
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibAsyncHTTPClientTests",
            dependencies: [
                "FutureLibAsyncHTTPClient",
                "IntegrationsTestSupport",
                nioConcurrencyHelpers,
            ] + nioHTTP,
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibHTTPDeadlineTests",
            dependencies: [
                "FutureLibHTTPDeadline",
                .product(name: "Cancellation", package: "FutureLib"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibServiceLifecycleTests",
            dependencies: [
                "FutureLibServiceLifecycle",
                serviceLifecycle,
                serviceLifecycleTestKit,
                logging,
            ],
            swiftSettings: swiftSettings
        ),
        // `make integrations-soak`: the Hummingbird integration under keep-alive load, checking the resident set.
        .executableTarget(
            name: "HummingbirdSoak",
            dependencies: hummingbirdUnderLoad + nioHTTP + [nioConcurrencyHelpers, "MallocInfo"],
            swiftSettings: swiftSettings
        ),
        // glibc's `mallinfo2()` and `malloc_trim(0)` for the soak (Swift's Glibc module lacks <malloc.h>).
        .target(name: "MallocInfo"),
        .testTarget(
            name: "FutureLibHummingbirdTests",
            dependencies: hummingbirdUnderLoad + nioHTTP + [nioConcurrencyHelpers, serviceLifecycle, logging],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibVaporTests",
            dependencies: [
                "FutureLibVapor",
                "FutureLibAsyncHTTPClient",
                "IntegrationsTestSupport",
                vapor,
                asyncHTTPClient,
                nioCore,
                nioConcurrencyHelpers,
                serviceLifecycle,
                logging,
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ] + nioHTTP,
            swiftSettings: swiftSettings
        ),
        // The cost of a request token under Vapor, measured with `wrk` (Documentation/ServerSideSwift.md).
        .executableTarget(
            name: "VaporCostServer",
            dependencies: [
                "FutureLibVapor", vapor, logging, nioCore, .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The cost of a request token and of the AsyncHTTPClient adapter under Hummingbird, measured with `wrk`
        // (`make bench-http`).
        .executableTarget(
            name: "HummingbirdCostServer",
            dependencies: [
                "FutureLibAsyncHTTPClient", "FutureLibHummingbird", hummingbird, asyncHTTPClient, logging, nioCore,
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibGRPCTests",
            dependencies: [
                "FutureLibGRPC",
                "FutureLibHTTPDeadline",
                .product(name: "FutureLib", package: "FutureLib"),
                grpcCore,
                grpcHTTP2,
                serviceLifecycle,
                serviceLifecycleTestKit,
                logging,
                nioConcurrencyHelpers,
            ],
            swiftSettings: swiftSettings
        ),
        // The code of Documentation/ServerSideSwift.md, compiled and run.
        .testTarget(
            name: "IntegrationsDocumentationExamples",
            dependencies: [
                "FutureLibAsyncHTTPClient",
                "FutureLibHummingbird",
                "FutureLibServiceLifecycle",
                "IntegrationsTestSupport",
                hummingbird,
                serviceLifecycle,
                serviceLifecycleTestKit,
                logging,
            ] + nioHTTP,
            swiftSettings: swiftSettings
        ),
    ]
)
