import AsyncHTTPClient
import IntegrationsTestSupport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import Vapor

@testable import FutureLibVapor

extension VaporApplicationTests {
    /// The observing server's documented fallback: Vapor 4 has no public way to reach its connections, so the server
    /// finds the listening channel by reflection; when a Vapor release changes what reflection finds, it serves all
    /// the same, says so in a warning, and the request tokens do not follow the client.
    @Suite(.timeLimit(.minutes(5)))
    struct ObservingHTTPServerTests {
        @Test(
            "without Vapor's listening channel (a Vapor whose fields changed), the server still serves, logs a warning, and observesClient is false"
        )
        func reflectionFailureDegrades() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            let logged = NIOLockedValueBox<[String]>([])
            let app = try await Application.make(
                .testing,
                .shared(group),
                logger: Logger(label: "vapor") { _ in RecordingLogHandler(logged) }
            )
            app.servers.use { app in ObservingHTTPServer(application: app, findListeningChannel: { _ in nil }) }
            app.middleware.use(RequestCancellationMiddleware(respondsToCancellation: true))
            app.get("observed") { request -> String in
                request.cancellation.observesClient ? "observed" : "not observed"
            }
            let client = HTTPClient(eventLoopGroup: group)
            var failure: (any Error)?
            do {
                // The reflection itself, on a server that does not listen yet: nothing found, nothing trapped.
                #expect(ObservingHTTPServer.listeningChannel(of: app.http.server.shared) == nil)
                try await app.asyncBoot()
                try await app.server.start(address: .hostname("127.0.0.1", port: 0))
                let port = app.http.server.shared.localAddress?.port ?? 0
                for _ in 0..<3 {
                    let response = try await client.execute(
                        HTTPClientRequest(url: "http://127.0.0.1:\(port)/observed"),
                        timeout: .seconds(30)
                    )
                    #expect(response.status == .ok)
                    #expect(String(buffer: try await response.body.collect(upTo: 1024)) == "not observed")
                }
                #expect(ClientConnection.registeredCount == 0)
                let warnings = logged.withLockedValue { $0 }.filter { $0.contains("listening channel was not found") }
                #expect(warnings.count == 1)
            } catch {
                failure = error
            }
            await app.server.shutdown()
            try await app.asyncShutdown()
            try await client.shutdown()
            try await group.shutdownGracefully()
            if let failure { throw failure }
        }
    }
}

/// Keeps every message logged, to check a warning.
private struct RecordingLogHandler: LogHandler {
    let messages: NIOLockedValueBox<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    var metadataProvider: Logger.MetadataProvider?

    init(_ messages: NIOLockedValueBox<[String]>) {
        self.messages = messages
    }

    func log(event: LogEvent) {
        messages.withLockedValue { $0.append("\(event.level): \(event.message)") }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}
