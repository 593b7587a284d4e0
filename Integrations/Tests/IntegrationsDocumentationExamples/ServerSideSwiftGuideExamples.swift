import AsyncHTTPClient
import FutureLib
import FutureLibAsyncHTTPClient
import FutureLibHummingbird
import FutureLibNIO
import FutureLibServiceLifecycle
import Hummingbird
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

// MARK: - A route that calls another service

func profile(
    id: String,
    usersService: String,
    client: HTTPClient,
    context: BasicCancellableRequestContext
)
    async throws -> Response
{
    let token = context.cancellation.token
    do {
        let response = try await client.execute(
            HTTPClientRequest(url: "\(usersService)/users/\(id)"),
            timeout: .seconds(30),
            upTo: 1 << 20,
            cancellationToken: token
        ).value()
        guard response.status == .ok else {
            throw HTTPError(.badGateway, message: "the users service answered \(response.status.code)")
        }
        let body = try await response.body.collect(upTo: 1 << 20)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
    } catch is CancellationError {
        // Futures fail with CancellationError whatever the reason; the token tells which one.
        switch token.cancellationReason {
        case is ClientDisconnectedError: return Response(status: .clientClosedRequest)
        case is DeadlineExceededError: return Response(status: .gatewayTimeout)
        case is GracefulShutdownError: return Response(status: .serviceUnavailable)
        default: throw CancellationError()
        }
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
                } catch is CancellationError where stop.token.cancellationReason is DeadlineExceededError {
                    // too slow this time: try again
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

@discardableResult
func eventLoopExamples(loop: any EventLoop, shutdown: CancellationToken) async throws -> Future<String> {
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
    return ping  // for the test; the guide stops here
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
    @Test(
        "the guide's route answers the service's body, 502 for a service's error, 504 at its deadline, 503 at shutdown"
    )
    func route() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await LoopbackHTTPServer.start(on: group)
        let client = HTTPClient(eventLoopGroup: group)
        let router = Router(context: BasicCancellableRequestContext.self)
        router.add(middleware: RequestCancellationMiddleware(deadline: .milliseconds(300)))
        // `/users/7` is not an endpoint of the test server: it answers like `/fast`.
        for (prefix, service) in [("direct", ""), ("failing", "/status/404"), ("hanging", "/hang")] {
            router.get("\(prefix)/users/:id") { _, context in
                try await profile(
                    id: context.parameters.require("id"),
                    usersService: server.url(service),
                    client: client,
                    context: context
                )
            }
        }
        router.group("slow").add(middleware: RequestDeadlineMiddleware(.seconds(600))).get("users/:id") { _, context in
            try await profile(id: "7", usersService: server.url("/hang"), client: client, context: context)
        }
        // `.http1()`, not the guide's `.http1ObservingClientDisconnects()`: RequestCancellationTests counts the
        // observed connections of the whole process, and this test is about the answers.
        try await withRunningApplication(router: router, server: .http1(), group: group) {
            port,
            shutDown in
            @Sendable func get(_ path: String) async throws -> (HTTPResponseStatus, String) {
                let response = try await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"),
                    timeout: .seconds(60)
                )
                return (response.status, String(buffer: try await response.body.collect(upTo: 1 << 16)))
            }
            let ok = try await get("/direct/users/7")
            #expect(ok.0 == .ok && ok.1 == "ok")
            let failing = try await get("/failing/users/7")
            #expect(failing.0 == .badGateway && failing.1.contains("the users service answered 404"))
            #expect(try await get("/hanging/users/7").0 == .gatewayTimeout)
            async let slow = get("/slow/users/7")
            #expect(await server.waitUntil { $0.requests == 4 })
            await shutDown()
            #expect(try await slow.0 == .serviceUnavailable)
        }
        try await client.shutdown()
        try await server.shutdown()
        try await group.shutdownGracefully()
    }

    @Test("the streaming download reads the whole body")
    func downloadExample() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await LoopbackHTTPServer.start(on: group)
        let client = HTTPClient(eventLoopGroup: group)
        var bytes = 0
        try await download(server.url("/slow-body?chunks=3&ms=1"), client: client, shutdown: .none) {
            bytes += $0.readableBytes
        }
        #expect(bytes == 3 * 16)
        try await client.shutdown()
        try await server.shutdown()
        try await group.shutdownGracefully()
    }

    @Test("the cache refresher stops on graceful shutdown: the request in flight is cancelled, its connection closed")
    func cacheRefresher() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await LoopbackHTTPServer.start(on: group)
        let client = HTTPClient(eventLoopGroup: group)
        await testGracefulShutdown { trigger in
            let refresher = CacheRefresher(client: client, url: server.url("/slow-head?ms=600000"))
            let run = Task { try await refresher.run() }  // inherits the graceful-shutdown context
            #expect(await server.waitUntil { $0.requests == 1 })
            trigger.triggerGracefulShutdown()
            // Not the deadline: the shutdown's cancellation leaves the loop and reaches the caller.
            await #expect(throws: CancellationError.self) { try await run.value }
            #expect(await server.waitUntil { $0.closedEarly == 1 })
            #expect(server.current.requests == 1)
        }
        await testGracefulShutdown { trigger in
            trigger.triggerGracefulShutdown()
            // Shut down before it starts: it returns without a request.
            try? await CacheRefresher(client: client, url: server.url("/slow-head?ms=600000")).run()
            #expect(server.current.requests == 1)
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

    @Test("the event-loop examples: the continuation on the loop, the bridged value, the ping the shutdown cancels")
    func eventLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let shutdown = CancellationRequest()
        let ping = try await eventLoopExamples(loop: group.next(), shutdown: shutdown.token)
        #expect(ping.result == nil)
        shutdown.cancel()
        // "CancellationError when shut down first": the 30 s task never runs.
        await #expect(throws: CancellationError.self) { try await ping.value() }
        try await group.shutdownGracefully()
    }
}
