import FutureLibGRPC
import FutureLibHummingbird
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCWorkService
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle
import UnixSignals

/// The HTTP edge: a Hummingbird application whose requests get a token (`RequestCancellationMiddleware`: the client
/// leaving, a deadline, a graceful shutdown), and whose route calls the middle over gRPC with that token. SIGTERM
/// shuts it down gracefully: the requests in flight are answered `503` and their calls to the middle reset.
func runEdge(_ timeline: Timeline, portFile: String, middlePort: Int) async throws {
    let middle = GRPCClient(
        transport: try .http2NIOPosix(
            target: .ipv4(address: "127.0.0.1", port: middlePort),
            transportSecurity: .plaintext
        )
    )
    let router = Router(context: BasicCancellableRequestContext.self)
    router.add(middleware: RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
    router.get("work/:label") { request, context -> String in
        let label = try context.parameters.require("label")
        if label == "ping" { return try await middle.work("ping") }
        if let deadline = request.uri.queryParameters.get("deadline_ms", as: Int.self) {
            context.cancellation.setDeadline(.milliseconds(deadline))
        }
        let token = context.cancellation.token
        timeline.event(label, "request started; time left: \(milliseconds(token.timeRemaining))")
        token.onCancel { timeline.event(label, "token fired: \(reasonName(token))") }
        do {
            // The token's time left is the call's timeout (its grpc-timeout); its cancellation resets the call.
            return try await middle.unary(
                request: ClientRequest(message: label),
                descriptor: workMethod,
                serializer: UTF8Serializer(),
                deserializer: UTF8Deserializer(),
                cancellationToken: token
            ) { try $0.message }
        } catch let error as RPCError {
            timeline.event(label, "its call to the middle ended: \(error.code)")
            throw error
        }
    }
    let logger = Logger(label: "edge") { _ in SwiftLogNoOpLogHandler() }
    let app = Application(
        router: router,
        server: .http1ObservingClientDisconnects(),
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? 0
            try? writePort(port, to: portFile)
            timeline.event("-", "HTTP server on 127.0.0.1:\(port)")
        },
        logger: logger
    )
    let services = ServiceGroup(
        configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm], logger: logger)
    )
    try await withThrowingTaskGroup { tasks in
        tasks.addTask { try await middle.runConnections() }
        try await services.run()
        timeline.event("-", "shut down gracefully")
        middle.beginGracefulShutdown()
        try await tasks.waitForAll()
    }
}
