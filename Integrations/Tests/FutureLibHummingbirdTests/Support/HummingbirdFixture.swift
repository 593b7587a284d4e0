// A real Hummingbird application on 127.0.0.1 (a port the OS picks), whose routes call a loopback upstream server
// through FutureLibAsyncHTTPClient with the request's token, and the clients that drive it.
import AsyncHTTPClient
import FutureLibAsyncHTTPClient
import FutureLibHummingbird
import Hummingbird
import HummingbirdCore
import IntegrationsTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// The request context of the tests: the request's cancellation, and which connection the request came on (to
/// tell that a keep-alive client used one connection throughout).
struct TestRequestContext: CancellableRequestContext {
    var coreContext: CoreRequestContextStorage
    var cancellation: RequestCancellation
    let connection: ObjectIdentifier

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        cancellation = RequestCancellation(source: source)
        connection = ObjectIdentifier(source.channel)
    }
}

/// The running application and what it saw.
struct HummingbirdFixture: Sendable {
    /// The application's port on 127.0.0.1.
    let port: Int
    /// The upstream server the routes call.
    let upstream: LoopbackHTTPServer
    /// The reasons of the requests whose upstream call failed, by the `tag` query parameter.
    let reasons: NIOLockedValueBox<[String: any Error]>
    /// Whether each request's context found its connection's observer.
    let unobserved: NIOLockedValueBox<Int>
    /// Each `GET /track` request's `CancellationRequest` (weakly) and whether its token was cancelled as the route
    /// ran, in order.
    let tracked: NIOLockedValueBox<[(request: WeakCancellationRequest, wasCancelled: Bool)]>
    /// The reasons with which `GET /track` requests' tokens were cancelled after their route returned (each route
    /// leaves a handler on its token).
    let lateReasons: NIOLockedValueBox<[any Error]>
    /// Triggers the application's graceful shutdown.
    let shutDown: @Sendable () async -> Void
    let group: MultiThreadedEventLoopGroup

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    func reason(_ tag: String) -> (any Error)? { reasons.withLockedValue { $0[tag] } }
}

/// Runs `body` against a fresh application and upstream, then shuts both down gracefully.
///
/// Routes: `GET /fast` answers the connection's identity; `GET /proxy?ms=N&tag=T` calls the upstream's
/// `/slow-head?ms=N` with the request's token and answers its body; `GET /deadline/proxy?…` the same under a
/// route deadline of 300 ms; `…&deadline=MS` has the route set its own deadline first; `GET /track` records its
/// request's `CancellationRequest` in `tracked` and leaves a handler on its token that records in `lateReasons`. With
/// `middleware` (the default) the application has `RequestCancellationMiddleware` and responds to cancellation
/// (`499`/`504`/`503`), and `shutdown` cancels every request; without it, the request context's own token is all
/// there is. Its connections have a
/// ``ClientDisconnectObserver`` unless `observed` is false.
func withHummingbirdApp(
    observed: Bool = true,
    middleware: Bool = true,
    shutdown: CancellationToken = .none,
    onUpstreamEvent: (@Sendable (LoopbackHTTPServer.Event) -> Void)? = nil,
    _ body: (HummingbirdFixture) async throws -> Void
) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let upstream = try await LoopbackHTTPServer.start(on: group, onEvent: onUpstreamEvent)
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
    let client = HTTPClient(eventLoopGroup: group, configuration: configuration)
    let reasons = NIOLockedValueBox<[String: any Error]>([:])
    let unobserved = NIOLockedValueBox(0)
    let tracked = NIOLockedValueBox<[(request: WeakCancellationRequest, wasCancelled: Bool)]>([])
    let lateReasons = NIOLockedValueBox<[any Error]>([])

    let router = Router(context: TestRequestContext.self)
    if middleware {
        router.add(middleware: RequestCancellationMiddleware(shutdown: shutdown, respondsToCancellation: true))
    }
    router.get("track") { _, context -> String in
        if let request = context.cancellation.request {
            let entry = (request: WeakCancellationRequest(request), wasCancelled: request.isCancellationRequested)
            tracked.withLockedValue { $0.append(entry) }
            let token = context.cancellation.token
            token.onCancel {
                let reason = token.cancellationReason ?? CancellationError()
                lateReasons.withLockedValue { $0.append(reason) }
            }
        }
        return "ok"
    }
    router.get("fast") { _, context -> String in
        if !context.cancellation.observesClient { unobserved.withLockedValue { $0 += 1 } }
        return "\(context.connection.hashValue)"
    }
    let proxy: @Sendable (Request, TestRequestContext) async throws -> String = { request, context in
        let ms = request.uri.queryParameters["ms"].map(String.init) ?? "0"
        if let deadline = request.uri.queryParameters["deadline"].flatMap({ Int($0) }) {
            context.cancellation.setDeadline(.milliseconds(deadline))
        }
        let tag = request.uri.queryParameters["tag"].map(String.init) ?? ""
        do {
            return try await upstream.slowHead(ms: ms, through: client, cancellationToken: context.cancellation.token)
        } catch {
            if let reason = context.cancellation.token.cancellationReason {
                reasons.withLockedValue { $0[tag] = reason }
            }
            throw error
        }
    }
    router.get("proxy", use: proxy)
    router.group("deadline").add(middleware: RequestDeadlineMiddleware(.milliseconds(300))).get("proxy", use: proxy)

    var failure: (any Error)?
    do {
        let server: HTTPServerBuilder = observed ? .http1ObservingClientDisconnects() : .http1()
        try await withRunningApplication(router: router, server: server, group: group) {
            port,
            shutDown in
            let fixture = HummingbirdFixture(
                port: port,
                upstream: upstream,
                reasons: reasons,
                unobserved: unobserved,
                tracked: tracked,
                lateReasons: lateReasons,
                shutDown: shutDown,
                group: group
            )
            try await body(fixture)
        }
    } catch {
        failure = error
    }
    try await client.shutdown()
    try await upstream.shutdown()
    try await group.shutdownGracefully()
    if let failure { throw failure }
}
