import AsyncHTTPClient
import FutureLibAsyncHTTPClient
import FutureLibHummingbird
import Hummingbird
import IntegrationsTestSupport
import NIOCore
import NIOPosix
import Testing

/// A route that calls its upstream through the AsyncHTTPClient adapter's `async` form. The token cancels the call's
/// child task, never the route's own task, which under Hummingbird is the connection's: a cancelled connection
/// task closes the connection without writing the route's answer.
@Suite(.timeLimit(.minutes(5)))
struct AsyncClientCallTests {
    @Test func `the deadline cuts the upstream call, the client gets 504, and the connection serves the next request`()
        async throws
    {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let upstream = try await LoopbackHTTPServer.start(on: group)
        let client = HTTPClient(eventLoopGroup: group)
        let router = Router(context: BasicCancellableRequestContext.self)
        router.add(
            middleware: RequestCancellationMiddleware(deadline: .milliseconds(300), respondsToCancellation: true)
        )
        router.get("fast") { _, _ -> String in "ok" }
        router.get("proxy") { _, context -> String in
            try await client.execute(
                HTTPClientRequest(url: upstream.url("/slow-head?ms=600000")),
                timeout: .seconds(600),
                cancellationToken: context.cancellation.token
            ) { response in String(buffer: try await response.body.collect(upTo: 1024)) }
        }
        var failure: (any Error)?
        do {
            try await withRunningApplication(router: router, server: .http1ObservingClientDisconnects(), group: group) {
                port,
                _ in
                let raw = try await RawHTTPClient.connect(port: port, group: group)
                try await raw.get("/proxy")
                #expect(await raw.waitUntilReceived { $0.hasPrefix("HTTP/1.1 504") })
                #expect(await upstream.waitUntil { $0.closedEarly == 1 && $0.open == 0 })  // the call was cut
                // The route's task, the connection's, was not cancelled: the connection is kept alive.
                try await raw.get("/fast")
                #expect(await raw.waitUntilReceived { $0.contains("HTTP/1.1 200") })
                #expect(raw.channel.isActive)
            }
        } catch {
            failure = error
        }
        try await client.shutdown()
        try await upstream.shutdown()
        try await group.shutdownGracefully()
        if let failure { throw failure }
    }
}
