// swift-tools-version: 6.2
import PackageDescription

// An outside package that uses FutureLib as a user does: it depends on the products by path and
// runs its tests with a plain `swift test --sanitize=thread` (`make tsan-consumer`, in CI). Its
// tests race the public API from many threads and tasks; any ThreadSanitizer report from the
// library's code fails the run. Never part of the root package; CI builds it on `make tsan`'s
// scratch path, where the products' modules are already compiled with the same command lines.
let package = Package(
    name: "FutureLibConsumer",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        // `name:` pins the identity, so `package: "FutureLib"` works whatever the checkout folder is called.
        .package(name: "FutureLib", path: "../..")
    ],
    targets: [
        .testTarget(
            name: "ConsumerTests",
            dependencies: [
                .product(name: "Cancellation", package: "FutureLib"),
                .product(name: "FutureLib", package: "FutureLib"),
            ]
        )
    ]
)
