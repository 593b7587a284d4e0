// `make integrations-soak`: a Hummingbird application with `RequestCancellationMiddleware` and
// `.http1ObservingClientDisconnects()` on loopback, under keep-alive clients, for a long time (release).
//
//     HummingbirdSoak [requests]     (default 100,000)
//
// Eight AsyncHTTPClient clients, one keep-alive connection each, share the requests: most are answered at once;
// one in 50 calls a loopback upstream whose answer takes 50 ms under a 1 ms route deadline (504, the upstream call
// cancelled); one in 500 is made on a raw socket that the client closes while the handler waits for the upstream
// (the upstream call cancelled). Prints the resident set after a warm-up of a tenth of the requests and at the end,
// and exits with a failure if it grew by more than `memoryBound`, if any request failed or was answered wrongly, or
// if a connection's state is left behind.
import AsyncHTTPClient
import Foundation
import FutureLibAsyncHTTPClient
import FutureLibHummingbird
import Hummingbird
import IntegrationsTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How much the resident set may grow from the warm-up to the end.
let memoryBound = 8 << 20
let requests = CommandLine.arguments.dropFirst().lazy.compactMap { Int($0) }.first ?? 100_000
let clients = 8

func megabytes(_ bytes: Int) -> String {
    let tenths = (bytes * 10) >> 20
    return "\(tenths / 10).\(tenths % 10) MB"
}

/// Counters, written from any thread.
let wrong = NIOLockedValueBox(0)
let deadlines = NIOLockedValueBox(0)
let disconnects = NIOLockedValueBox(0)
let completed = NIOLockedValueBox(0)

let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
let upstream = try await LoopbackHTTPServer.start(on: group)
var upstreamConfiguration = HTTPClient.Configuration()
upstreamConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
let upstreamClient = HTTPClient(eventLoopGroup: group, configuration: upstreamConfiguration)

let router = Router(context: BasicCancellableRequestContext.self)
router.add(middleware: RequestCancellationMiddleware(respondsToCancellation: true))
router.get("fast") { _, _ in "ok" }
let proxy: @Sendable (Request, BasicCancellableRequestContext) async throws -> String = { request, context in
    let ms = request.uri.queryParameters["ms"].map(String.init) ?? "0"
    do {
        return try await upstream.slowHead(
            ms: ms,
            through: upstreamClient,
            cancellationToken: context.cancellation.token
        )
    } catch {
        switch context.cancellation.token.cancellationReason {
        case is DeadlineExceededError: deadlines.withLockedValue { $0 += 1 }
        case is ClientDisconnectedError: disconnects.withLockedValue { $0 += 1 }
        default: wrong.withLockedValue { $0 += 1 }
        }
        throw error
    }
}
router.get("proxy", use: proxy)
router.group("deadline").add(middleware: RequestDeadlineMiddleware(.milliseconds(1))).get("proxy", use: proxy)

/// One request on a raw socket, closed by the client while the handler waits for the upstream.
func disconnectingRequest(port: Int) async throws {
    let before = upstream.current.requests
    let channel = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port).get()
    let text = "GET /proxy?ms=60000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    try await channel.writeAndFlush(ByteBuffer(string: text)).get()
    await upstream.waitUntil { $0.requests > before }
    try await channel.close()
}

/// `count` requests on one keep-alive connection, numbered from `first`.
func client(
    port: Int,
    first: Int,
    count: Int,
    warmUp: NIOLockedValueBox<Int>,
    warmUpDone: @Sendable () -> Void
)
    async throws
{
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1
    let client = HTTPClient(eventLoopGroup: group, configuration: configuration)
    for index in first..<(first + count) {
        if index % 500 == 250 {
            try await disconnectingRequest(port: port)
        } else {
            let deadline = index % 50 == 0
            let path = deadline ? "/deadline/proxy?ms=50" : "/fast"
            let response = try await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"),
                timeout: .seconds(60)
            )
            _ = try await response.body.collect(upTo: 1024)
            if response.status != (deadline ? .gatewayTimeout : .ok) { wrong.withLockedValue { $0 += 1 } }
        }
        completed.withLockedValue { $0 += 1 }
        if warmUp.withLockedValue({
            $0 -= 1
            return $0 == 0
        }) {
            warmUpDone()
        }
    }
    try await client.shutdown()
}

let failed = try await withRunningApplication(router: router, server: .http1ObservingClientDisconnects(), group: group)
{
    port,
    _ -> Bool in
    var failed = false
    let warmUp = NIOLockedValueBox(requests / 10)
    let warmedUp = NIOLockedValueBox(0)
    let started = ContinuousClock.now
    try await withThrowingTaskGroup { load in
        for index in 0..<clients {
            load.addTask {
                try await client(
                    port: port,
                    first: index * (requests / clients),
                    count: requests / clients,
                    warmUp: warmUp
                ) {
                    warmedUp.withLockedValue { $0 = residentBytes() }
                }
            }
        }
        try await load.waitForAll()
    }
    // The connections closed with their clients: every observer's state is gone.
    let end = ContinuousClock.now + .seconds(30)
    while ClientDisconnectObserver.observedConnections > 0, ContinuousClock.now < end {
        try await Task.sleep(for: .milliseconds(10))
    }
    let before = warmedUp.withLockedValue { $0 }
    let after = residentBytes()
    print(
        "HummingbirdSoak: \(completed.withLockedValue { $0 }) requests in \(ContinuousClock.now - started),",
        "\(deadlines.withLockedValue { $0 }) cut by their deadline (504), \(disconnects.withLockedValue { $0 }) by a client gone;",
        "resident set \(megabytes(before)) after warm-up -> \(megabytes(after)) at the end"
    )
    if after - before > memoryBound {
        print("HummingbirdSoak: FAILED: the resident set grew by \(megabytes(after - before))")
        failed = true
    }
    if wrong.withLockedValue({ $0 }) > 0 {
        print("HummingbirdSoak: FAILED: \(wrong.withLockedValue { $0 }) requests answered wrongly")
        failed = true
    }
    if ClientDisconnectObserver.observedConnections > 0 {
        print("HummingbirdSoak: FAILED: \(ClientDisconnectObserver.observedConnections) connections' state left behind")
        failed = true
    }
    return failed
}
try await upstreamClient.shutdown().get()
try await upstream.shutdown()
try await group.shutdownGracefully()
exit(failed ? 1 : 0)
