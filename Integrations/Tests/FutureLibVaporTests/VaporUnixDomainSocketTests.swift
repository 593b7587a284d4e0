import IntegrationsTestSupport
import Logging
import NIOPosix
import Testing
import Vapor

@testable import FutureLibVapor

extension VaporApplicationTests {
    /// A Vapor request finds its connection by its client's address; over a Unix domain socket every client has the
    /// same unnamed one, so those connections are not observed rather than mixed up.
    @Suite(.timeLimit(.minutes(5)))
    struct VaporUnixDomainSocketTests {
        @Test(
            "requests over a Unix domain socket are not observed (its clients share one unnamed address), so none watches another client's connection"
        )
        func unixDomainSocketIsNotObserved() async throws {
            // One loop, so that both connections would share the key (client address, loop) if it were registered.
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let path = "/tmp/futurelib-vapor-\(UInt64.random(in: 0...UInt64.max)).sock"
            let app = try await Application.make(
                .testing,
                .shared(group),
                logger: Logger(label: "vapor") { _ in SwiftLogNoOpLogHandler() }
            )
            app.servers.use(.httpObservingClientDisconnects)
            app.middleware.use(RequestCancellationMiddleware(respondsToCancellation: true))
            app.get("observed") { request -> String in
                request.cancellation.observesClient ? "observed" : "not observed"
            }
            var failure: (any Error)?
            do {
                try await app.asyncBoot()
                try await app.server.start(address: .unixDomainSocket(path: path))
                let first = try await RawHTTPClient.connect(unixDomainSocketPath: path, group: group)
                let second = try await RawHTTPClient.connect(unixDomainSocketPath: path, group: group)
                for client in [first, second] {
                    try await client.get("/observed")
                    #expect(await client.waitUntilReceived { $0.hasPrefix("HTTP/1.1 200") && $0.hasSuffix("observed") })
                    #expect(client.text.hasSuffix("not observed"))
                }
                #expect(ClientConnection.registeredCount == 0)
                try await first.channel.close()
                try await second.channel.close()
            } catch {
                failure = error
            }
            await app.server.shutdown()
            try await app.asyncShutdown()
            try await group.shutdownGracefully()
            try? FileManager.default.removeItem(atPath: path)
            if let failure { throw failure }
        }
    }
}
