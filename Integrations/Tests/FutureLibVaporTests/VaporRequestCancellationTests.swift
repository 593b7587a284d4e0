import AsyncHTTPClient
import IntegrationsTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing
import Vapor

@testable import FutureLibVapor

extension VaporApplicationTests {
    /// A Vapor application with `RequestCancellationMiddleware` and `.httpObservingClientDisconnects`, on loopback,
    /// driven by real clients. Serialized: the tests count the application's observed connections.
    @Suite(.timeLimit(.minutes(10)))
    struct VaporRequestCancellationTests {
        /// The keep-alive test's request count (`FUTURELIB_VAPOR_KEEPALIVE_REQUESTS`, default 10,000).
        static let keepAliveRequests = environmentInteger("FUTURELIB_VAPOR_KEEPALIVE_REQUESTS") ?? 10_000

        @Test("the observing server finds Vapor's listening channel and observes every connection")
        func serverIsObserved() async throws {
            try await withVaporApp { app in
                let client = try await RawHTTPClient.connect(port: app.port, group: app.group)
                try await client.get("/fast")
                #expect(await client.waitUntilReceived { $0.hasPrefix("HTTP/1.1 200") && $0.contains("\r\n\r\n") })
                #expect(ClientConnection.registeredCount == 1)
                #expect(app.unobserved.withLockedValue { $0 } == 0)
                try await client.channel.close()
                #expect(await waitUntil { ClientConnection.registeredCount == 0 })
            }
        }

        @Test(
            "a keep-alive client sends 10^4 requests on one connection, none fails, the connection stays open, and Vapor runs each request's middleware inside its connection's read"
        )
        func keepAliveSurvives() async throws {
            try await withVaporApp { app in
                try await HTTPClient.keepingOneConnection(on: app.group).shuttingDown { client in
                    let (connections, failures) = await client.getOneAfterAnother(
                        Self.keepAliveRequests,
                        from: app.url("/fast")
                    )
                    #expect(failures == 0)
                    #expect(connections.count == 1, "the client's connection was closed and reopened")
                    #expect(ClientConnection.registeredCount == 1)
                    #expect(app.unobserved.withLockedValue { $0 } == 0)
                    // Vapor ran every middleware chain inside the read of its request's connection: the
                    // middleware found the connection from the reading observer, not from the table.
                    #expect(app.outsideRead.withLockedValue { $0 } == 0)
                }
                #expect(await waitUntil { ClientConnection.registeredCount == 0 })
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
            try await withVaporApp(onUpstreamEvent: onUpstreamEvent) { app in
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
                    print(
                        "Vapor: client \(disconnect) -> upstream connection closed after \(closedEarlyAt - disconnectedAt)"
                    )
                }
                if disconnect == .halfClose {
                    // Vapor does not allow half-closed connections: reading the client's end-of-file, NIO closes it.
                    try? await client.channel.closeFuture.get()
                }
                #expect(await waitUntil { ClientConnection.registeredCount == 0 })
            }
        }

        @Test(
            "a request pipelined behind a slow one, delivered after the first one's response (outside its connection's read), still follows its client"
        )
        func pipelinedRequestFollowsItsClient() async throws {
            try await withVaporApp { app in
                let client = try await RawHTTPClient.connect(port: app.port, group: app.group)
                // One write: Vapor holds the second request until the first one's response (an upstream call's,
                // written from a task) is out.
                let requests = ["/proxy?ms=100&tag=first", "/wait?tag=pipelined"]
                    .map { "GET \($0) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }.joined()
                try await client.channel.writeAndFlush(ByteBuffer(string: requests)).get()
                #expect(await waitUntil { app.waiting.withLockedValue { $0.contains("pipelined") } })
                // Written before the pipelined request was delivered; the client's loop may not have read it yet.
                #expect(await client.waitUntilReceived { $0.hasPrefix("HTTP/1.1 200") })
                // The first request ran inside its connection's read, the pipelined one outside it.
                #expect(app.outsideRead.withLockedValue { $0 } == 1)
                try await client.channel.close()
                #expect(await waitUntil { app.reason("pipelined") != nil })
                #expect(app.reason("pipelined") is ClientDisconnectedError)
                #expect(await waitUntil { ClientConnection.registeredCount == 0 })
            }
        }

        @Test("Vapor does not cancel the route's task when its client goes away: only the token says so")
        func routeTaskIsNotCancelled() async throws {
            try await withVaporApp { app in
                let client = try await RawHTTPClient.connect(port: app.port, group: app.group)
                try await client.get("/wait?tag=task")
                #expect(await waitUntil { app.waiting.withLockedValue { $0.contains("task") } })
                try await client.channel.close()
                #expect(await waitUntil { app.taskCancelled.withLockedValue { $0["task"] } != nil })
                #expect(app.taskCancelled.withLockedValue { $0["task"] } == false)
                #expect(app.reason("task") is ClientDisconnectedError)
            }
        }

        @Test(
            "a route group deadline answers 504, the reason is DeadlineExceededError, the upstream call is cancelled, and the connection serves the next request"
        )
        func deadlineAnswers504() async throws {
            try await withVaporApp { app in
                try await HTTPClient.keepingOneConnection(on: app.group).shuttingDown { client in
                    let response = try await client.execute(
                        HTTPClientRequest(url: app.url("/deadline/proxy?ms=60000&tag=late")),
                        timeout: .seconds(60)
                    )
                    #expect(response.status == .gatewayTimeout)
                    #expect(response.headers.first(name: "connection") != "close")
                    _ = try await response.body.collect(upTo: 1024)
                    #expect(app.reason("late") is DeadlineExceededError)
                    #expect(await app.upstream.waitUntil { $0.closedEarly == 1 })
                    // The same connection still serves the next request.
                    #expect(ClientConnection.registeredCount == 1)
                    let next = try await client.execute(HTTPClientRequest(url: app.url("/fast")), timeout: .seconds(60))
                    #expect(next.status == .ok)
                    _ = try await next.body.collect(upTo: 1024)
                    #expect(ClientConnection.registeredCount == 1)
                }
            }
        }

        @Test(
            "the caller's deadline header (Connect-Timeout-Ms) bounds the request's token: 504, DeadlineExceededError, the upstream call cancelled, also under a later route deadline; garbage is ignored"
        )
        func callerDeadlineAnswers504() async throws {
            try await withVaporApp { app in
                try await HTTPClient.keepingOneConnection(on: app.group).shuttingDown { client in
                    for (path, tag) in [("/proxy", "caller"), ("/deadline/proxy", "caller-shorter")] {
                        var request = HTTPClientRequest(url: app.url("\(path)?ms=60000&tag=\(tag)"))
                        request.headers.add(name: "Connect-Timeout-Ms", value: "200")
                        let started = ContinuousClock.now
                        let response = try await client.execute(request, timeout: .seconds(60))
                        _ = try await response.body.collect(upTo: 1024)
                        // Reported, not asserted: about 200 ms, the caller's budget, not the route group's 300 ms.
                        print(
                            "Vapor: \(path) with Connect-Timeout-Ms: 200 answered after \(ContinuousClock.now - started)"
                        )
                        #expect(response.status == .gatewayTimeout)
                        #expect(app.reason(tag) is DeadlineExceededError)
                    }
                    #expect(await app.upstream.waitUntil { $0.closedEarly == 2 })
                    // Garbage is ignored: the request is answered by its upstream.
                    var garbage = HTTPClientRequest(url: app.url("/proxy?ms=10&tag=garbage"))
                    garbage.headers.add(name: "Connect-Timeout-Ms", value: "soon")
                    let answered = try await client.execute(garbage, timeout: .seconds(60))
                    #expect(answered.status == .ok)
                    _ = try await answered.body.collect(upTo: 1024)
                }
            }
        }

        @Test(
            "graceful shutdown with requests in flight answers each 503, reason GracefulShutdownError, and the server stops promptly"
        )
        func shutdownAnswers503() async throws {
            try await withVaporApp { app in
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
                        let started = ContinuousClock.now
                        await app.shutDown()
                        // Reported, not asserted: Vapor's own limit is its configuration's `shutdownTimeout` (10 s).
                        print(
                            "Vapor: shutdown with \(inFlight) requests in flight took \(ContinuousClock.now - started)"
                        )
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
            "the application's own requestShutdown cancels the request in flight with its reason, and every later one at once; the server keeps answering"
        )
        func applicationShutdownTokenCancelsEachConnection() async throws {
            struct Stopping: Error {}
            try await withVaporApp { app in
                try await HTTPClient(eventLoopGroup: app.group).shuttingDown { client in
                    // The connection's first request makes it follow the shutdown token.
                    let first = try await client.execute(
                        HTTPClientRequest(url: app.url("/fast")),
                        timeout: .seconds(60)
                    )
                    #expect(first.status == .ok)
                    _ = try await first.body.collect(upTo: 1024)
                    async let waiting = client.execute(
                        HTTPClientRequest(url: app.url("/wait?tag=inFlight")),
                        timeout: .seconds(60)
                    )
                    #expect(await waitUntil { app.waiting.withLockedValue { $0.contains("inFlight") } })
                    app.requestShutdown.cancel(reason: Stopping())
                    // `Stopping` maps to no status: Vapor's error handling answers.
                    #expect(try await waiting.status == .internalServerError)
                    #expect(app.reason("inFlight") is Stopping)
                    let later = try await client.execute(
                        HTTPClientRequest(url: app.url("/wait?tag=later")),
                        timeout: .seconds(60)
                    )
                    #expect(later.status == .internalServerError)
                    #expect(app.reason("later") is Stopping)
                    let fast = try await client.execute(HTTPClientRequest(url: app.url("/fast")), timeout: .seconds(60))
                    #expect(fast.status == .ok)
                }
            }
        }

        @Test("the reasons map to 499, 504 and 503; other reasons to nothing")
        func statusOfReasons() {
            #expect(HTTPResponseStatus(cancellationReason: ClientDisconnectedError())?.code == 499)
            #expect(HTTPResponseStatus(cancellationReason: DeadlineExceededError()) == .gatewayTimeout)
            #expect(HTTPResponseStatus(cancellationReason: GracefulShutdownError()) == .serviceUnavailable)
            #expect(HTTPResponseStatus(cancellationReason: CancellationError()) == nil)
        }
    }
}
