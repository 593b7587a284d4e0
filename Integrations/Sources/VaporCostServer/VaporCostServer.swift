// The cost of a request token under Vapor, measured from outside with `wrk` (Documentation/ServerSideSwift.md):
//
//     VaporCostServer plain PORT    a Vapor application whose `GET /` answers "ok"
//     VaporCostServer token PORT    the same with `.httpObservingClientDisconnects` and RequestCancellationMiddleware,
//                                   its route reading `request.cancellation.token` and calling nothing
//     VaporCostServer default PORT  the token application with the middleware's defaults (errors go on to Vapor's
//                                   error handling: no promise of the middleware's own)
//     VaporCostServer observer PORT the plain application on `.httpObservingClientDisconnects`
//     VaporCostServer pass PORT     the plain application with a middleware that only calls `next`
//     VaporCostServer promise PORT  the plain application with a middleware that answers through a promise of its own
//     VaporCostServer request PORT  the plain application with a middleware that makes a CancellationRequest and
//                                   checks for the deadline header
//     VaporCostServer unobserved PORT  the token application on Vapor's own server (no observer)
//
// All log nothing and run until killed.
import FutureLibVapor
import Logging
import NIOCore
import NIOPosix
import Vapor

@main
enum VaporCostServer {
    /// Serves from a task while the main thread sleeps: no `dispatchMain()` (an `async` `main` runs it), which
    /// valgrind cannot run (`make bench-http-instructions` runs this server under callgrind).
    static func main() {
        Task.detached {
            do {
                try await serve()
            } catch {
                print("VaporCostServer: \(error)")
                exit(1)
            }
        }
        while true { sleep(3600) }
    }

    static func serve() async throws {
        let mode = CommandLine.arguments.dropFirst().first ?? "plain"
        let port = CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) } ?? 8080

        let app = try await Application.make(
            .production,
            .singleton,
            logger: Logger(label: "vapor") { _ in
                SwiftLogNoOpLogHandler()
            }
        )
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = port
        switch mode {
        case "token", "unobserved", "default":
            if mode != "unobserved" { app.servers.use(.httpObservingClientDisconnects) }
            app.middleware.use(RequestCancellationMiddleware(respondsToCancellation: mode != "default"))
            app.get { request -> String in
                request.cancellation.token.isCancellationRequested ? "cancelled" : "ok"
            }
        case "observer":
            app.servers.use(.httpObservingClientDisconnects)
            app.get { _ -> String in "ok" }
        case "pass":
            app.middleware.use(PassingMiddleware())
            app.get { _ -> String in "ok" }
        case "promise":
            app.middleware.use(PromiseMiddleware())
            app.get { _ -> String in "ok" }
        case "request":
            app.middleware.use(RequestMiddleware())
            app.get { _ -> String in "ok" }
        default:
            app.get { _ -> String in "ok" }
        }
        try await app.asyncBoot()
        try await app.server.start(address: .hostname("127.0.0.1", port: port))
        print("VaporCostServer \(mode) listening on 127.0.0.1:\(port)")
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}

/// A middleware that only calls the next responder: what any middleware costs.
struct PassingMiddleware: Middleware {
    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        next.respond(to: request)
    }
}

/// A middleware that answers through a promise of its own, completed from a callback on the next responder's future.
struct PromiseMiddleware: Middleware {
    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let response = next.respond(to: request)
        let answer = response.eventLoop.makePromise(of: Response.self)
        response.whenComplete { answer.completeWith($0) }
        return answer.futureResult
    }
}

/// A middleware that makes a cancellation request and releases it, with the deadline header's check and no callback.
struct RequestMiddleware: Middleware {
    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let stop = CancellationRequest()
        _ = stop.token.canBeCancelled
        _ = request.headers.contains(name: "Connect-Timeout-Ms")
        return next.respond(to: request)
    }
}
