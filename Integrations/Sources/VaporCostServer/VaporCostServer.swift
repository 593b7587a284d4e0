// The cost of a request token under Vapor, measured from outside with `wrk` (Documentation/ServerSideSwift.md):
//
//     VaporCostServer plain PORT    a Vapor application whose `GET /` answers "ok"
//     VaporCostServer token PORT    the same with `.httpObservingClientDisconnects` and RequestCancellationMiddleware,
//                                   its route reading `request.cancellation.token` and calling nothing
//
// Both log nothing and run until killed.
import FutureLibVapor
import Logging
import NIOCore
import NIOPosix
import Vapor

@main
enum VaporCostServer {
    static func main() async throws {
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
        case "token":
            app.servers.use(.httpObservingClientDisconnects)
            app.middleware.use(RequestCancellationMiddleware(respondsToCancellation: true))
            app.get { request -> String in
                request.cancellation.token.isCancellationRequested ? "cancelled" : "ok"
            }
        default:
            app.get { _ -> String in "ok" }
        }
        try await app.asyncBoot()
        try await app.server.start(address: .hostname("127.0.0.1", port: port))
        print("VaporCostServer \(mode) listening on 127.0.0.1:\(port)")
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
