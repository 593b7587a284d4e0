// The cost of a request token and of the AsyncHTTPClient adapter under Hummingbird, measured from outside with
// `wrk` (`make bench-http`, Documentation/Performance.md):
//
//     HummingbirdCostServer plain PORT                 `GET /` answers "ok"
//     HummingbirdCostServer token PORT                 the same with `.http1ObservingClientDisconnects()` and
//                                                      RequestCancellationMiddleware, the route reading its token
//                                                      and calling nothing
//     HummingbirdCostServer context-token PORT         the same without the middleware: the token the request
//                                                      context makes on an observed connection
//     HummingbirdCostServer proxy-plain PORT UPSTREAM  the plain application whose route calls
//                                                      `http://127.0.0.1:UPSTREAM/` with AsyncHTTPClient's own
//                                                      `execute(_:timeout:)` and collects the body
//     HummingbirdCostServer proxy-token PORT UPSTREAM  the token application whose route makes the same call through
//                                                      the async `execute(_:timeout:cancellationToken:handleResponse:)`
//                                                      with the request's token, as the server guide writes it
//     HummingbirdCostServer proxy-future PORT UPSTREAM the same through the `Future` form,
//                                                      `execute(_:timeout:upTo:cancellationToken:)`, then `value()`
//     HummingbirdCostServer proxy-adapter PORT UPSTREAM the plain application (no middleware) whose route makes the
//                                                      call through the async form with one long-lived token (a
//                                                      shutdown token's): the adapter's cost alone
//     HummingbirdCostServer upstream PORT              the upstream: the plain application, on one loop
//
// And the token route's parts, one at a time (for a profile of where its cost goes):
//
//     HummingbirdCostServer observer PORT              the plain application with `.http1ObservingClientDisconnects()`
//     HummingbirdCostServer context PORT               the plain application with `BasicCancellableRequestContext`
//                                                      and no middleware (the route reads its `.none` token)
//     HummingbirdCostServer pass PORT                  `context-token` and a middleware that only calls `next`: what
//                                                      any middleware costs
//
// Each logs nothing and runs until killed. With BENCH_HTTP_NO_TRACER=1 in the environment, the proxies' clients are
// configured with no tracer (`tracing.tracer = nil`) instead of the default (swift-distributed-tracing's no-op one).
import AsyncHTTPClient
import FutureLibAsyncHTTPClient
import FutureLibHummingbird
import Hummingbird
import Logging
import NIOCore
import NIOPosix

@main
enum HummingbirdCostServer {
    static func makeClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        if Environment().get("BENCH_HTTP_NO_TRACER") == "1" { configuration.tracing.tracer = nil }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Serves from a detached task while the main thread sleeps: no `dispatchMain()` (an `async` `main` runs it),
    /// which valgrind cannot run (`make bench-http-instructions` runs this server under callgrind).
    static func main() {
        Task.detached {
            do {
                try await serve()
            } catch {
                print("HummingbirdCostServer: \(error)")
                exit(1)
            }
        }
        while true { sleep(3600) }
    }

    static func serve() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let mode = arguments.first ?? "plain"
        let port = arguments.dropFirst().first.flatMap { Int($0) } ?? 8080
        let upstreamPort = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 8090
        let upstream = "http://127.0.0.1:\(upstreamPort)/"
        let quiet = Logger(label: "cost") { _ in SwiftLogNoOpLogHandler() }
        let configuration = ApplicationConfiguration(address: .hostname("127.0.0.1", port: port))
        print("HummingbirdCostServer \(mode) listening on 127.0.0.1:\(port)")

        switch mode {
        case "token", "proxy-token", "proxy-future":
            let client = makeClient()
            let router = Router(context: BasicCancellableRequestContext.self)
            router.add(middleware: RequestCancellationMiddleware(respondsToCancellation: true))
            if mode == "token" {
                router.get { _, context -> String in
                    context.cancellation.token.isCancellationRequested ? "cancelled" : "ok"
                }
            } else if mode == "proxy-future" {
                router.get { _, context -> String in
                    let response = try await client.execute(
                        HTTPClientRequest(url: upstream),
                        timeout: .seconds(30),
                        upTo: 1 << 16,
                        cancellationToken: context.cancellation.token
                    ).value()
                    return String(buffer: try await response.body.collect(upTo: 1 << 16))
                }
            } else {
                router.get { _, context -> String in
                    try await client.execute(
                        HTTPClientRequest(url: upstream),
                        timeout: .seconds(30),
                        cancellationToken: context.cancellation.token
                    ) { response in String(buffer: try await response.body.collect(upTo: 1 << 16)) }
                }
            }
            let app = Application(
                router: router,
                server: .http1ObservingClientDisconnects(),
                configuration: configuration,
                logger: quiet
            )
            try await app.runService()
        case "context", "context-token", "pass":
            let router = Router(context: BasicCancellableRequestContext.self)
            if mode == "pass" { router.add(middleware: PassingMiddleware()) }
            router.get { _, context -> String in
                context.cancellation.token.isCancellationRequested ? "cancelled" : "ok"
            }
            let app = Application(
                router: router,
                server: mode == "context" ? .http1() : .http1ObservingClientDisconnects(),
                configuration: configuration,
                logger: quiet
            )
            try await app.runService()
        default:
            let client = makeClient()
            let router = Router()
            if mode == "proxy-plain" {
                router.get { _, _ -> String in
                    let response = try await client.execute(HTTPClientRequest(url: upstream), timeout: .seconds(30))
                    return String(buffer: try await response.body.collect(upTo: 1 << 16))
                }
            } else if mode == "proxy-adapter" {
                let shutdown = CancellationRequest()  // never cancelled here; every request registers on it
                router.get { _, _ -> String in
                    try await client.execute(
                        HTTPClientRequest(url: upstream),
                        timeout: .seconds(30),
                        cancellationToken: shutdown.token
                    ) { response in String(buffer: try await response.body.collect(upTo: 1 << 16)) }
                }
            } else {
                router.get { _, _ -> String in "ok" }
            }
            let app = Application(
                router: router,
                server: mode == "observer" ? .http1ObservingClientDisconnects() : .http1(),
                configuration: configuration,
                eventLoopGroupProvider: mode == "upstream"
                    ? .shared(MultiThreadedEventLoopGroup(numberOfThreads: 1)) : .singleton,
                logger: quiet
            )
            try await app.runService()
        }
    }
}

/// A middleware that only calls `next` (`@concurrent` as RequestCancellationMiddleware's `handle`).
struct PassingMiddleware<Context: RequestContext>: RouterMiddleware {
    @concurrent func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        try await next(request, context)
    }
}
