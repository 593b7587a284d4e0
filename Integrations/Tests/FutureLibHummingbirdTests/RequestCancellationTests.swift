import AsyncHTTPClient
import FutureLibHummingbird
import Hummingbird
import IntegrationsTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing

/// A Hummingbird application with `RequestCancellationMiddleware` (or, where a test says so, without it) and
/// `.http1ObservingClientDisconnects()`, on loopback, driven by real clients. Serialized: the tests count the application's observed connections.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct RequestCancellationTests {
    /// The keep-alive test's request count (`FUTURELIB_HUMMINGBIRD_KEEPALIVE_REQUESTS`, default 10,000).
    static let keepAliveRequests = environmentInteger("FUTURELIB_HUMMINGBIRD_KEEPALIVE_REQUESTS") ?? 10_000

    @Test("a keep-alive client sends 10^4 requests on one connection, none fails, and the connection stays open")
    func keepAliveSurvives() async throws {
        try await withHummingbirdApp { app in
            try await HTTPClient.keepingOneConnection(on: app.group).shuttingDown { client in
                let (connections, failures) = await client.getOneAfterAnother(
                    Self.keepAliveRequests,
                    from: app.url("/fast")
                )
                #expect(failures == 0)
                #expect(connections.count == 1, "the client's connection was closed and reopened")
                #expect(ClientDisconnectObserver.observedConnections == 1)
                #expect(app.unobserved.withLockedValue { $0 } == 0)
            }
            #expect(await waitUntil { ClientDisconnectObserver.observedConnections == 0 })
        }
    }

    @Test(
        "a client that disconnects mid-handler cancels the upstream call (ClientDisconnectedError), after a first request on the same keep-alive connection",
        arguments: [Disconnect.close, .halfClose]
    )
    func clientDisconnectCancelsUpstream(_ disconnect: Disconnect) async throws {
        let closedEarlyAt = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
        let onUpstreamEvent: @Sendable (LoopbackHTTPServer.Event) -> Void = { event in
            if case .closedEarly = event { closedEarlyAt.withLockedValue { $0 = $0 ?? .now } }
        }
        try await withHummingbirdApp(onUpstreamEvent: onUpstreamEvent) { app in
            let client = try await RawHTTPClient.connect(port: app.port, group: app.group)
            try await client.get("/fast")
            #expect(await client.waitUntilReceived { $0.hasPrefix("HTTP/1.1 200") && $0.contains("\r\n\r\n") })
            try await client.get("/proxy?ms=60000&tag=gone")
            #expect(await app.upstream.waitUntil { $0.requests == 1 })
            let disconnectedAt = ContinuousClock.now
            try await client.leave(disconnect)
            // The upstream's response would take a minute: seeing its connection close early proves the token fired.
            #expect(await app.upstream.waitUntil { $0.closedEarly == 1 })
            #expect(await waitUntil { app.reason("gone") != nil })
            #expect(app.reason("gone") is ClientDisconnectedError)
            if let closedEarlyAt = closedEarlyAt.withLockedValue({ $0 }) {
                // Reported, not asserted (the machine may be loaded): the figure the documentation quotes.
                print("client \(disconnect) -> upstream connection closed after \(closedEarlyAt - disconnectedAt)")
            }
            if disconnect == .halfClose {
                // The connection is still half open: the handler's answer (499) reaches nobody who waits, and the
                // server then closes it.
                try? await client.channel.closeFuture.get()
            }
            #expect(await waitUntil { ClientDisconnectObserver.observedConnections == 0 })
        }
    }

    @Test("a route deadline answers 504, the reason is DeadlineExceededError, and the upstream call is cancelled")
    func deadlineAnswers504() async throws {
        try await withHummingbirdApp { app in
            try await HTTPClient(eventLoopGroup: app.group).shuttingDown { client in
                let response = try await client.execute(
                    HTTPClientRequest(url: app.url("/deadline/proxy?ms=60000&tag=late")),
                    timeout: .seconds(60)
                )
                #expect(response.status == .gatewayTimeout)
                #expect(app.reason("late") is DeadlineExceededError)
                #expect(await app.upstream.waitUntil { $0.closedEarly == 1 })
                // The same connection still serves the next request.
                let next = try await client.execute(HTTPClientRequest(url: app.url("/fast")), timeout: .seconds(60))
                #expect(next.status == .ok)
            }
        }
    }

    @Test(
        "graceful shutdown with requests in flight answers each 503, reason GracefulShutdownError: on observed connections (the server's quiescing reaches the observer) and on unobserved ones (a graceful-shutdown handler per request)",
        arguments: [true, false]
    )
    func shutdownAnswers503(observed: Bool) async throws {
        try await withHummingbirdApp(observed: observed) { app in
            try await HTTPClient(eventLoopGroup: app.group).shuttingDown { client in
                let inFlight = 5
                try await withThrowingTaskGroup(of: HTTPResponseStatus.self) { requests in
                    for index in 0..<inFlight {
                        requests.addTask {
                            let response = try await client.execute(
                                HTTPClientRequest(url: app.url("/proxy?ms=60000&tag=stop\(index)")),
                                timeout: .seconds(60)
                            )
                            return response.status
                        }
                    }
                    #expect(await app.upstream.waitUntil { $0.requests == inFlight })
                    await app.shutDown()
                    var statuses: [HTTPResponseStatus] = []
                    for try await status in requests { statuses.append(status) }
                    #expect(statuses == Array(repeating: .serviceUnavailable, count: inFlight))
                }
                for index in 0..<inFlight {
                    #expect(app.reason("stop\(index)") is GracefulShutdownError)
                }
                #expect(await app.upstream.waitUntil { $0.closedEarly == inFlight })
            }
        }
    }

    @Test(
        "a shutdown token given to the middleware cancels the request in flight with its own reason, on observed and unobserved connections",
        arguments: [true, false]
    )
    func middlewareShutdownToken(observed: Bool) async throws {
        struct Maintenance: Error {}
        let shutdown = CancellationRequest()
        try await withHummingbirdApp(observed: observed, shutdown: shutdown.token) { app in
            try await HTTPClient(eventLoopGroup: app.group).shuttingDown { client in
                try await withThrowingTaskGroup(of: Void.self) { requests in
                    requests.addTask {
                        _ = try? await client.execute(
                            HTTPClientRequest(url: app.url("/proxy?ms=60000&tag=maintenance")),
                            timeout: .seconds(60)
                        )
                    }
                    #expect(await app.upstream.waitUntil { $0.requests == 1 })
                    shutdown.cancel(reason: Maintenance())
                    try await requests.waitForAll()
                }
                #expect(app.reason("maintenance") is Maintenance)
                #expect(await app.upstream.waitUntil { $0.closedEarly == 1 })
            }
        }
    }

    // MARK: - The request context's own token, without the middleware

    @Test(
        "without the middleware, a client that disconnects mid-handler still cancels the upstream call (ClientDisconnectedError): the request context made the token",
        arguments: [Disconnect.close, .halfClose]
    )
    func clientDisconnectWithoutMiddleware(_ disconnect: Disconnect) async throws {
        try await withHummingbirdApp(middleware: false) { app in
            let client = try await RawHTTPClient.connect(port: app.port, group: app.group)
            try await client.get("/proxy?ms=60000&tag=gone")
            #expect(await app.upstream.waitUntil { $0.requests == 1 })
            try await client.leave(disconnect)
            #expect(await app.upstream.waitUntil { $0.closedEarly == 1 })
            #expect(await waitUntil { app.reason("gone") != nil })
            #expect(app.reason("gone") is ClientDisconnectedError)
            if disconnect == .halfClose { try? await client.channel.closeFuture.get() }
            #expect(await waitUntil { ClientDisconnectObserver.observedConnections == 0 })
        }
    }

    @Test("without the middleware, graceful shutdown cancels every request in flight with GracefulShutdownError")
    func shutdownWithoutMiddleware() async throws {
        try await withHummingbirdApp(middleware: false) { app in
            try await HTTPClient(eventLoopGroup: app.group).shuttingDown { client in
                let inFlight = 3
                try await withThrowingTaskGroup(of: Void.self) { requests in
                    for index in 0..<inFlight {
                        requests.addTask {
                            _ = try? await client.execute(
                                HTTPClientRequest(url: app.url("/proxy?ms=60000&tag=stop\(index)")),
                                timeout: .seconds(60)
                            )
                        }
                    }
                    #expect(await app.upstream.waitUntil { $0.requests == inFlight })
                    await app.shutDown()
                    try await requests.waitForAll()
                }
                for index in 0..<inFlight {
                    #expect(app.reason("stop\(index)") is GracefulShutdownError)
                }
                #expect(await app.upstream.waitUntil { $0.closedEarly == inFlight })
            }
        }
    }

    @Test(
        "without the middleware, a request with another pipelined behind it is the one its connection watches: Hummingbird makes the next request's context only after the first one's answer"
    )
    func pipelinedWithoutMiddleware() async throws {
        try await withHummingbirdApp(middleware: false) { app in
            let client = try await RawHTTPClient.connect(port: app.port, group: app.group)
            // One write of both (about 80 bytes, one read on the server, which decodes both heads in it before the
            // first one's handler starts): had the second request's context been made while the first ran, it
            // would be the one watched, and the client's leaving would not reach the first.
            let requests = ["/proxy?ms=60000&tag=first", "/fast"]
                .map { "GET \($0) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }.joined()
            try await client.channel.writeAndFlush(ByteBuffer(string: requests)).get()
            #expect(await app.upstream.waitUntil { $0.requests == 1 })
            try await client.channel.close()
            #expect(await app.upstream.waitUntil { $0.closedEarly == 1 })
            #expect(await waitUntil { app.reason("first") != nil })
            #expect(app.reason("first") is ClientDisconnectedError)
            #expect(await waitUntil { ClientDisconnectObserver.observedConnections == 0 })
        }
    }

    @Test("without the middleware, a route's own deadline (setDeadline) cancels its token with DeadlineExceededError")
    func ownDeadlineWithoutMiddleware() async throws {
        try await withHummingbirdApp(middleware: false) { app in
            try await HTTPClient(eventLoopGroup: app.group).shuttingDown { client in
                _ = try? await client.execute(
                    HTTPClientRequest(url: app.url("/proxy?ms=60000&tag=own&deadline=200")),
                    timeout: .seconds(60)
                )
                #expect(app.reason("own") is DeadlineExceededError)
                #expect(await app.upstream.waitUntil { $0.closedEarly == 1 })
            }
        }
    }

    @Test(
        "without the middleware, each request on a keep-alive connection gets a token of its own, and the previous request's is let go of when the next one starts",
        arguments: [false, true]
    )
    func eachRequestItsOwnToken(middleware: Bool) async throws {
        let count = 1_000
        try await withHummingbirdApp(middleware: middleware) { app in
            try await HTTPClient.keepingOneConnection(on: app.group).shuttingDown { client in
                let (connections, failures) = await client.getOneAfterAnother(count, from: app.url("/track"))
                #expect(failures == 0)
                #expect(connections.count == 1)
                let tracked = app.tracked.withLockedValue { $0 }
                #expect(tracked.count == count)
                #expect(tracked.allSatisfy { !$0.wasCancelled })
                // Every request before the last was let go of: by the next request's context (without the middleware)
                // or when its route returned (with it). The last one is kept by its connection until the next
                // request or the connection's end, without the middleware; with it, it went when its route returned.
                let alive = tracked.dropLast().filter { $0.request.request != nil }.count
                #expect(alive == 0)
                if middleware {
                    #expect(await waitUntil { tracked.last?.request.request == nil })
                } else {
                    #expect(tracked.last?.request.request != nil)
                }
            }
            // The connection closed: its last request is let go of as well. Without the middleware it was still
            // watched, so the end of the connection, after its answer, cancelled it; no earlier request's token
            // fired. With the middleware none fired.
            #expect(await waitUntil { ClientDisconnectObserver.observedConnections == 0 })
            #expect(await waitUntil { app.tracked.withLockedValue { $0.last?.request.request == nil } })
            let late = app.lateReasons.withLockedValue { $0 }
            #expect(late.count == (middleware ? 0 : 1))
            #expect(late.allSatisfy { $0 is ClientDisconnectedError })
        }
    }

    @Test("the reasons map to 499, 504 and 503; other reasons to nothing")
    func statusOfReasons() {
        #expect(HTTPResponse.Status(cancellationReason: ClientDisconnectedError())?.code == 499)
        #expect(HTTPResponse.Status(cancellationReason: DeadlineExceededError()) == .gatewayTimeout)
        #expect(HTTPResponse.Status(cancellationReason: GracefulShutdownError()) == .serviceUnavailable)
        #expect(HTTPResponse.Status(cancellationReason: CancellationError()) == nil)
    }
}
