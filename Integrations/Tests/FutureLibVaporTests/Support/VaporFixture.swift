// A real Vapor application on 127.0.0.1 (a port the OS picks), whose routes call a loopback upstream server through
// FutureLibAsyncHTTPClient with the request's token, and the clients that drive it.
import AsyncHTTPClient
import FutureLibAsyncHTTPClient
import IntegrationsTestSupport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import Vapor

@testable import FutureLibVapor

/// The suites that run a Vapor application, one at a time: they count the connections the observers registered,
/// which are process-wide.
@Suite(.serialized, .timeLimit(.minutes(30)))
enum VaporApplicationTests {}

/// The running application and what it saw.
struct VaporFixture: Sendable {
    /// The application's port on 127.0.0.1.
    let port: Int
    /// The upstream server the routes call.
    let upstream: LoopbackHTTPServer
    /// The reasons of the requests whose upstream call failed, by the `tag` query parameter.
    let reasons: NIOLockedValueBox<[String: any Error]>
    /// Requests whose token did not follow their client (no observer found for their connection).
    let unobserved: NIOLockedValueBox<Int>
    /// Requests whose middleware chain ran outside the read of their own connection, where
    /// `RequestCancellationMiddleware` finds the connection in the table instead of the reading observer.
    let outsideRead: NIOLockedValueBox<Int>
    /// Whether each `/wait` request's task was cancelled once its token was, by tag.
    let taskCancelled: NIOLockedValueBox<[String: Bool]>
    /// `/wait` requests whose handler has started, by tag.
    let waiting: NIOLockedValueBox<Set<String>>
    /// `/wait?tag=soak…` requests that ended with `ClientDisconnectedError` (`true`) or another reason (`false`):
    /// counted, not kept, so that the soak's memory stays the application's.
    let soakEndings: NIOLockedValueBox<[Bool: Int]>
    /// Shuts the server down as Vapor's `serve` command does on `SIGTERM`.
    let shutDown: @Sendable () async -> Void
    /// The application's `requestShutdown`, which an application run otherwise cancels itself.
    let requestShutdown: CancellationRequest
    let group: MultiThreadedEventLoopGroup

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    func reason(_ tag: String) -> (any Error)? { reasons.withLockedValue { $0[tag] } }
}

/// Runs `body` against a fresh application and upstream, then shuts both down.
///
/// Routes: `GET /fast` answers the connection's client address; `GET /proxy?ms=N&tag=T` calls the upstream's
/// `/slow-head?ms=N` with the request's token and answers its body; `GET /deadline/proxy?…` the same under a route
/// group deadline of 300 ms; `GET /wait?tag=T` waits until its token is cancelled (a minute at most) and records
/// whether its task was. The application responds to cancellation (`499`/`504`/`503`).
func withVaporApp(
    onUpstreamEvent: (@Sendable (LoopbackHTTPServer.Event) -> Void)? = nil,
    _ body: (VaporFixture) async throws -> Void
) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let upstream = try await LoopbackHTTPServer.start(on: group, onEvent: onUpstreamEvent)
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
    let client = HTTPClient(eventLoopGroup: group, configuration: configuration)
    let reasons = NIOLockedValueBox<[String: any Error]>([:])
    let unobserved = NIOLockedValueBox(0)
    let outsideRead = NIOLockedValueBox(0)
    let taskCancelled = NIOLockedValueBox<[String: Bool]>([:])
    let waiting = NIOLockedValueBox<Set<String>>([])
    let soakEndings = NIOLockedValueBox<[Bool: Int]>([:])

    let app = try await Application.make(
        .testing,
        .shared(group),
        logger: Logger(label: "vapor") { _ in
            SwiftLogNoOpLogHandler()
        }
    )
    app.servers.use(.httpObservingClientDisconnects)
    app.middleware.use(RequestCancellationMiddleware(respondsToCancellation: true))
    app.middleware.use(ReadCheckMiddleware(outsideRead: outsideRead))
    app.get("fast") { request -> String in
        if !request.cancellation.observesClient { unobserved.withLockedValue { $0 += 1 } }
        return request.remoteAddress?.description ?? "?"
    }
    let proxy: @Sendable (Request) async throws -> String = { request in
        let ms = request.query[String.self, at: "ms"] ?? "0"
        let tag = request.query[String.self, at: "tag"] ?? ""
        do {
            return try await upstream.slowHead(ms: ms, through: client, cancellationToken: request.cancellation.token)
        } catch {
            if let reason = request.cancellation.token.cancellationReason {
                reasons.withLockedValue { $0[tag] = reason }
            }
            throw error
        }
    }
    app.get("proxy", use: proxy)
    app.grouped("deadline").grouped(RequestDeadlineMiddleware(.milliseconds(300))).get("proxy", use: proxy)
    app.get("wait") { request async throws -> String in
        let tag = request.query[String.self, at: "tag"] ?? ""
        let token = request.cancellation.token
        request.cancellation.setDeadline(.seconds(60))
        waiting.withLockedValue { _ = $0.insert(tag) }
        await token.wait()
        if tag.hasPrefix("soak") {
            let disconnected = token.cancellationReason is ClientDisconnectedError
            soakEndings.withLockedValue { $0[disconnected, default: 0] += 1 }
        } else {
            taskCancelled.withLockedValue { $0[tag] = Task.isCancelled }
            if let reason = token.cancellationReason { reasons.withLockedValue { $0[tag] = reason } }
        }
        throw CancellationError()
    }

    var failure: (any Error)?
    do {
        try await app.asyncBoot()
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        let port = app.http.server.shared.localAddress?.port ?? 0
        let server = app.server
        let fixture = VaporFixture(
            port: port,
            upstream: upstream,
            reasons: reasons,
            unobserved: unobserved,
            outsideRead: outsideRead,
            taskCancelled: taskCancelled,
            waiting: waiting,
            soakEndings: soakEndings,
            shutDown: { await server.shutdown() },
            requestShutdown: app.requestShutdown,
            group: group
        )
        try await body(fixture)
    } catch {
        failure = error
    }
    await app.server.shutdown()
    try await app.asyncShutdown()
    try await client.shutdown()
    try await upstream.shutdown()
    try await group.shutdownGracefully()
    if let failure { throw failure }
}

/// Counts the requests whose middleware runs outside the read of their own connection: the next middleware after
/// `RequestCancellationMiddleware` runs where it ran, in the same call.
private struct ReadCheckMiddleware: Middleware {
    let outsideRead: NIOLockedValueBox<Int>

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let ownConnection = request.remoteAddress.flatMap { remote in
            ReadingObserver.current?.connection(remote: remote, loop: ObjectIdentifier(request.eventLoop))
        }
        if ownConnection == nil { outsideRead.withLockedValue { $0 += 1 } }
        return next.respond(to: request)
    }
}
