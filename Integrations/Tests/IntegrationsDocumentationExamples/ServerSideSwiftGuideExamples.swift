import AsyncHTTPClient
import FutureLib
import FutureLibAsyncHTTPClient
import FutureLibNIO
import FutureLibServiceLifecycle
import IntegrationsTestSupport
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

// The code of Documentation/ServerSideSwift.md, in order, run against the loopback test server, so that a renamed
// API breaks the build instead of the reader.

// MARK: - A route handler that hands a token to AsyncHTTPClient

/// The body of a Hummingbird or Vapor route: the request's own task, a deadline and the server's shutdown, as one
/// token for the outgoing call.
func profile(id: Int, client: HTTPClient, baseURL: String, shutdown: CancellationToken) async throws -> ByteBuffer {
    try await withTaskCancellationToken { clientWentAway in
        let deadline = CancellationRequest(cancelAfter: .seconds(2))
        let stop = CancellationRequest(linkedTo: [clientWentAway, deadline.token, shutdown])
        let request = HTTPClientRequest(url: "\(baseURL)/users/\(id)")
        let response = try await client.execute(
            request,
            timeout: .seconds(30),
            upTo: 1 << 20,
            cancellationToken: stop.token
        ).value()
        guard response.status == .ok else { throw HTTPClientError.invalidURL }
        return try await response.body.collect(upTo: 1 << 20)
    }
}

func download(
    _ url: String,
    client: HTTPClient,
    shutdown: CancellationToken,
    into sink: (ByteBuffer) -> Void
)
    async throws
{
    let stop = CancellationRequest(linkedTo: [shutdown])
    let response = try await client.execute(
        HTTPClientRequest(url: url),
        timeout: .minutes(10),
        cancellationToken: stop.token
    ).value()
    for try await chunk in response.body {  // throws CancellationError once the token is cancelled
        sink(chunk)
    }
}

// MARK: - Tokens that follow the service's life

/// A service that refreshes a cache until the service group shuts down; the code below it knows only tokens.
struct CacheRefresher: Service {
    let client: HTTPClient
    let url: String

    func run() async throws {
        try await withGracefulShutdownToken { shutdown in
            while !shutdown.isCancellationRequested {
                let deadline = CancellationRequest(cancelAfter: .seconds(5))
                let stop = CancellationRequest(linkedTo: [deadline.token, shutdown])
                let response = client.execute(
                    HTTPClientRequest(url: url),
                    timeout: .seconds(30),
                    upTo: 1 << 16,
                    cancellationToken: stop.token
                )
                do {
                    store(try await response.value())
                } catch is CancellationError {
                    // the deadline or the shutdown: the loop condition tells which
                }
            }
        }
    }

    func store(_ response: HTTPClientResponse) {}
}

// MARK: - Continuations on an event loop

/// A handler that answers with the result of a `Future`, continuing on its channel's loop.
final class LookupHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let lookUp: @Sendable (String) -> Future<String>

    init(lookUp: @escaping @Sendable (String) -> Future<String>) {
        self.lookUp = lookUp
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let key = String(buffer: unwrapInboundIn(data))
        let channel = context.channel
        // The EventLoopFuture completes on the channel's loop: writing from its callback needs no hop.
        lookUp(key).eventLoopFuture(on: context.eventLoop).whenSuccess { value in
            channel.writeAndFlush(ByteBuffer(string: value), promise: nil)
        }
    }
}

func eventLoopExamples(loop: any EventLoop, shutdown: CancellationToken) async throws {
    // A continuation on the loop:
    let user = Future(value: "ada")
    user.onSuccess(on: .eventLoop(loop)) { name in
        loop.preconditionInEventLoop()
        print(name)
    }
    // An EventLoopFuture as a Future, which a token can stop waiting for:
    let ready = loop.makeSucceededFuture(42).future(cancellationToken: shutdown)
    _ = try await ready.value()
    // A timer on the loop that the shutdown token cancels:
    let ping = loop.scheduleTask(in: .seconds(30), cancellationToken: shutdown) { "ping" }
    ping.onFailure(policy: .allErrors) { error in print("no ping:", error) }  // CancellationError when shut down first
}

// MARK: - Documentation/Migration.md, "From SwiftNIO EventLoopFuture"

func migrationFromNIO(loop: any EventLoop, port: Int, token: CancellationToken) -> EventLoopFuture<String> {
    let connected = Future(
        ClientBootstrap(group: loop).connect(host: "127.0.0.1", port: port),
        cancellationToken: token
    )
    let greeting = connected.map { channel in "connected from \(channel.localAddress?.port ?? 0)" }
    greeting.eventLoopFuture(on: loop).whenSuccess { text in print(text) }  // on the loop's thread
    return greeting.eventLoopFuture(on: loop)
}

@Suite(.timeLimit(.minutes(2)))
struct ServerSideSwiftGuideExamples {
    @Test("the route handler's call is cancelled by the server's shutdown")
    func routeHandler() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await LoopbackHTTPServer.start(on: group)
        let client = HTTPClient(eventLoopGroup: group)
        // `/users/7` is not an endpoint of the test server: it answers like `/fast`.
        let body = try await profile(id: 7, client: client, baseURL: server.url(""), shutdown: .none)
        #expect(String(buffer: body) == "ok")
        await #expect(throws: CancellationError.self) {
            try await profile(id: 7, client: client, baseURL: server.url(""), shutdown: .cancelled)
        }
        var bytes = 0
        try await download(server.url("/slow-body?chunks=3&ms=1"), client: client, shutdown: .none) {
            bytes += $0.readableBytes
        }
        #expect(bytes == 3 * 16)
        try await client.shutdown()
        try await server.shutdown()
        try await group.shutdownGracefully()
    }

    @Test("the cache refresher stops on graceful shutdown")
    func cacheRefresher() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await LoopbackHTTPServer.start(on: group)
        let client = HTTPClient(eventLoopGroup: group)
        await testGracefulShutdown { trigger in
            trigger.triggerGracefulShutdown()
            try? await CacheRefresher(client: client, url: server.url("/slow-head?ms=600000")).run()
        }
        try await client.shutdown()
        try await server.shutdown()
        try await group.shutdownGracefully()
    }

    @Test("the migration guide's NIO example connects")
    func migration() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await LoopbackHTTPServer.start(on: group)
        let text = try await migrationFromNIO(loop: group.next(), port: server.port, token: .none).get()
        #expect(text.hasPrefix("connected from"))
        #expect(await server.waitUntil { $0.accepted == 1 })
        try await server.shutdown()
        try await group.shutdownGracefully()
    }

    @Test("the event-loop examples run")
    func eventLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try await eventLoopExamples(loop: group.next(), shutdown: .none)
        try await group.shutdownGracefully()
    }
}
