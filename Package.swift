// swift-tools-version: 6.2
import PackageDescription

// One settings list for every target, so the whole package builds under the same rules.
let swiftSettings: [SwiftSetting] = [
    // `any P` spelled out: existential costs are visible at the use site.
    .enableUpcomingFeature("ExistentialAny"),
    // A file sees only the modules it imports itself.
    .enableUpcomingFeature("MemberImportVisibility"),
    // Imports are internal unless marked `public import`, so nothing leaks into the API by accident.
    .enableUpcomingFeature("InternalImportsByDefault"),
    // `nonisolated async` functions run on the caller's executor (`value() async` hops nowhere).
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    // Every public type says whether it is `Sendable`.
    .treatWarning("ExplicitSendable", as: .warning),
]

let package = Package(
    name: "FutureLib",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Cancellation", targets: ["Cancellation"]),
        .library(name: "FutureLib", targets: ["FutureLib"]),
        // URLSession requests as futures whose token cancels the task; the only Foundation user.
        .library(name: "FutureLibFoundation", targets: ["FutureLibFoundation"]),
    ],
    targets: [
        // Locks, spin waits, processor and thread identity: what `Cancellation` and `FutureLib` are
        // built from, not API (`package` access); not a product (as NIO's `NIOConcurrencyHelpers`).
        .target(name: "FutureLibConcurrencyHelpers", swiftSettings: swiftSettings),
        // One C thread-local pointer, for the per-thread state of `FutureLib`'s hot path (C, because
        // Swift has no thread-local storage of its own); not a product.
        .target(name: "FutureLibThreadLocal"),
        // The Swift runtime's uniqueness test on a borrowed reference (C, because Swift code may not
        // name the runtime's symbols), for `CancellationRequest.isReusable`; not a product.
        .target(name: "FutureLibReferenceCount"),
        .target(
            name: "Cancellation",
            dependencies: ["FutureLibConcurrencyHelpers", "FutureLibReferenceCount"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FutureLib",
            dependencies: ["Cancellation", "FutureLibConcurrencyHelpers", "FutureLibThreadLocal"],
            swiftSettings: swiftSettings
        ),
        .target(name: "FutureLibFoundation", dependencies: ["FutureLib"], swiftSettings: swiftSettings),
        // An example library that takes tokens without knowing futures: `Cancellation` only.
        .target(name: "ChecksumExample", dependencies: ["Cancellation"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "Demo",
            dependencies: ["FutureLib", "FutureLibFoundation", "HTTPFixture"],
            swiftSettings: swiftSettings
        ),
        // `make soak`: a million server-shaped requests (linked request, deadline, futures); not a product.
        .executableTarget(name: "Soak", dependencies: ["FutureLib", "TestSupport"], swiftSettings: swiftSettings),
        // A loopback HTTP/1.1 server for the demo and the URLSession tests; not a product.
        .target(
            name: "HTTPFixture",
            dependencies: ["Cancellation", "FutureLibConcurrencyHelpers"],
            path: "Tests/HTTPFixture",
            swiftSettings: swiftSettings
        ),
        // Threads, barriers, lifetime probes and race runners shared by both test targets.
        .target(
            name: "TestSupport",
            dependencies: ["Cancellation", "FutureLibConcurrencyHelpers"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        // The one enumeration of the future combinators the tests apply (`FutureCombinator`), through
        // the public API only, so that the attack suite, a client of the products, uses it too.
        .target(
            name: "TestCombinators",
            dependencies: ["FutureLib"],
            path: "Tests/TestCombinators",
            swiftSettings: swiftSettings
        ),
        // The outcomes, errors and contexts that both FutureLib test targets use.
        .target(
            name: "FutureTestSupport",
            dependencies: ["FutureLib"],
            path: "Tests/FutureTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CancellationTests",
            dependencies: ["Cancellation", "FutureLibConcurrencyHelpers", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibConcurrencyHelpersTests",
            dependencies: ["FutureLibConcurrencyHelpers", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibTests",
            dependencies: [
                "FutureLib", "FutureLibConcurrencyHelpers", "TestSupport", "TestCombinators", "FutureTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        // The streams' tests, a target of their own: `make test-release` compiles each test target whole-module on
        // one core, and apart from the futures' tests the two compile side by side.
        .testTarget(
            name: "FutureStreamTests",
            dependencies: [
                "FutureLib", "FutureLibConcurrencyHelpers", "TestSupport", "TestCombinators", "FutureTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FutureLibFoundationTests",
            dependencies: ["FutureLibFoundation", "HTTPFixture"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ChecksumExampleTests",
            dependencies: ["ChecksumExample", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        // Attacks from outside the module: hostile numbers, extreme depth, blocking waits and bridges,
        // through the public API only (no `@testable`, no TestSupport; TestCombinators uses only the
        // public API too); crashing and hanging cases run in exit tests.
        .testTarget(
            name: "AttackTests",
            dependencies: ["FutureLib", "Cancellation", "TestCombinators"],
            swiftSettings: swiftSettings
        ),
        // The examples of Documentation/ and the DocC articles, run, with what they promise asserted.
        // That every ```swift block of the docs compiles is checked by Scripts/check-doc-snippets.py
        // (part of `make test`).
        .testTarget(
            name: "DocumentationExamples",
            dependencies: ["FutureLib", "Cancellation", "FutureLibFoundation", "TestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)
