import FutureLibGRPC
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCWorkService

/// The gRPC hops: a server with `ServerCancellationInterceptor` on a loopback port, whose handler is `handle`.
/// SIGTERM (the demo's script stopping it) ends the process.
func serveGRPC(
    _ timeline: Timeline,
    portFile: String,
    handle: @escaping @Sendable (String) async throws -> String
) async throws {
    let transport = HTTP2ServerTransport.Posix(
        address: .ipv4(host: "127.0.0.1", port: 0),
        transportSecurity: .plaintext
    )
    let server = GRPCServer(
        transport: transport,
        services: [WorkService(handle: handle)],
        interceptors: [ServerCancellationInterceptor()]
    )
    try await withThrowingTaskGroup { tasks in
        tasks.addTask { try await server.serve() }
        let port = try await transport.listeningAddress.ipv4!.port
        try writePort(port, to: portFile)
        timeline.event("-", "gRPC server on 127.0.0.1:\(port)")
        try await tasks.waitForAll()
    }
}

/// The leaf: `work` of its own (a sleep) that stops when the RPC's token fires.
func runLeaf(_ timeline: Timeline, portFile: String, work: Duration) async throws {
    try await serveGRPC(timeline, portFile: portFile) { label in
        if label == "ping" { return "pong" }
        let token = RPCCancellation.token
        let started = ContinuousClock.now
        timeline.event(label, "RPC started; time left: \(milliseconds(RPCCancellation.timeRemaining))")
        do {
            // `Task.sleep` stops when the token fires: `withCancellation` cancels this task then.
            try await withCancellation(token) {
                // Registered after `withCancellation`'s handler, so it runs first (newest first): the timeline says
                // "token fired" before "stopped".
                token.onCancel { timeline.event(label, "token fired: \(reasonName(token))") }
                try await Task.sleep(for: work)
            }
        } catch {
            timeline.event(
                label,
                "stopped after \(milliseconds(.now - started)) of its \(milliseconds(work)) of work"
            )
            throw error
        }
        timeline.event(label, "finished its \(milliseconds(work)) of work")
        return "leaf done"
    }
}

/// The middle: calls the leaf through a client with `ClientCancellationInterceptor`, passing no token: the call
/// inherits the inbound RPC's deadline and cancellation.
func runMiddle(_ timeline: Timeline, portFile: String, leafPort: Int) async throws {
    try await withGRPCClient(
        transport: try .http2NIOPosix(
            target: .ipv4(address: "127.0.0.1", port: leafPort),
            transportSecurity: .plaintext
        ),
        interceptors: [ClientCancellationInterceptor()]
    ) { leaf in
        try await serveGRPC(timeline, portFile: portFile) { label in
            if label == "ping" { return try await leaf.work("ping") }
            let token = RPCCancellation.token
            timeline.event(label, "RPC started; time left: \(milliseconds(RPCCancellation.timeRemaining))")
            token.onCancel { timeline.event(label, "token fired: \(reasonName(token))") }
            do {
                return try await leaf.work(label)
            } catch let error as RPCError {
                timeline.event(label, "its call to the leaf ended: \(error.code)")
                throw error
            }
        }
    }
}

extension GRPCClient {
    /// A call of ``workMethod`` through GRPCCore's own method.
    func work(_ label: String) async throws -> String {
        try await unary(
            request: ClientRequest(message: label),
            descriptor: workMethod,
            serializer: UTF8Serializer(),
            deserializer: UTF8Deserializer(),
            options: .defaults
        ) { try $0.message }
    }
}
