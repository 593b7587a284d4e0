import FutureLibGRPC
import GRPCCore
import GRPCNIOTransportHTTP2
import NIOConcurrencyHelpers

/// A hand-written codec: messages are UTF-8 strings (no generated code).
struct UTF8Serializer: MessageSerializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: String) throws -> Bytes {
        Bytes(Array(message.utf8))
    }
}

struct UTF8Deserializer: MessageDeserializer {
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> String {
        serializedMessageBytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}

/// The methods of the test service.
enum Probe {
    static let unary = MethodDescriptor(fullyQualifiedService: "test.Probe", method: "Unary")
    static let serverStreaming = MethodDescriptor(fullyQualifiedService: "test.Probe", method: "ServerStreaming")
}

/// A service whose two methods run the closures a test gives: a unary one (message in, message out) and a
/// server-streaming one (message in, writes out).
struct ProbeService: RegistrableRPCService {
    typealias Unary =
        @Sendable (_ message: String, _ metadata: Metadata, _ context: ServerContext) async throws -> String
    typealias Streaming = @Sendable (_ message: String, _ writer: RPCWriter<String>) async throws -> Void

    var unary: Unary
    var serverStreaming: Streaming = { _, _ in }

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        let unary = self.unary
        router.registerHandler(
            forMethod: Probe.unary,
            deserializer: UTF8Deserializer(),
            serializer: UTF8Serializer()
        ) { request, context in
            let single = try await ServerRequest(stream: request)
            let answer = try await unary(single.message, single.metadata, context)
            return StreamingServerResponse(single: ServerResponse(message: answer))
        }
        let serverStreaming = self.serverStreaming
        router.registerHandler(
            forMethod: Probe.serverStreaming,
            deserializer: UTF8Deserializer(),
            serializer: UTF8Serializer()
        ) { request, _ in
            let single = try await ServerRequest(stream: request)
            return StreamingServerResponse { writer in
                try await serverStreaming(single.message, writer)
                return [:]
            }
        }
    }
}

typealias Client = GRPCClient<HTTP2ClientTransport.Posix>
typealias Server = GRPCServer<HTTP2ServerTransport.Posix>

/// Runs a server on a loopback port with `service` and `interceptors` while `body` runs, then shuts it down.
func withLoopbackServer<T: Sendable>(
    _ service: ProbeService,
    interceptors: [any ServerInterceptor] = [],
    _ body: (_ port: Int, _ server: Server) async throws -> T
) async throws -> T {
    let transport = HTTP2ServerTransport.Posix(
        address: .ipv4(host: "127.0.0.1", port: 0),
        transportSecurity: .plaintext
    )
    let server = GRPCServer(transport: transport, services: [service], interceptors: interceptors)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            try await server.serve()
            return nil
        }
        let port = try await transport.listeningAddress.ipv4!.port
        do {
            let result = try await body(port, server)
            server.beginGracefulShutdown()
            try await group.waitForAll()
            return result
        } catch {
            server.beginGracefulShutdown()
            group.cancelAll()
            throw error
        }
    }
}

/// Runs a client connected to `port` with `interceptors` while `body` runs.
func withLoopbackClient<T: Sendable>(
    port: Int,
    interceptors: [any ClientInterceptor] = [],
    _ body: (Client) async throws -> T
) async throws -> T {
    try await withGRPCClient(
        transport: try .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext),
        interceptors: interceptors,
        handleClient: body
    )
}

extension GRPCClient {
    /// A unary call of `Probe.unary` through GRPCCore's own method.
    func probe(_ message: String, metadata: Metadata = [:], options: CallOptions = .defaults) async throws -> String {
        try await unary(
            request: ClientRequest(message: message, metadata: metadata),
            descriptor: Probe.unary,
            serializer: UTF8Serializer(),
            deserializer: UTF8Deserializer(),
            options: options
        ) { try $0.message }
    }

    /// A unary call of `Probe.unary` bounded by `token`.
    func probe(
        _ message: String,
        options: CallOptions = .defaults,
        cancellationToken: CancellationToken
    ) async throws -> String {
        try await unary(
            request: ClientRequest(message: message),
            descriptor: Probe.unary,
            serializer: UTF8Serializer(),
            deserializer: UTF8Deserializer(),
            options: options,
            cancellationToken: cancellationToken
        ) { try $0.message }
    }
}

/// Values a test's handlers record, read once they are there.
final class Recorder<Value: Sendable>: Sendable {
    private let values = NIOLockedValueBox<[Value]>([])

    func record(_ value: Value) {
        values.withLockedValue { $0.append(value) }
    }

    var all: [Value] { values.withLockedValue { $0 } }

    /// Waits (polling, up to 10 s) until `count` values are recorded, and returns them.
    func wait(for count: Int = 1) async throws -> [Value] {
        for _ in 0..<2_000 {
            let now = all
            if now.count >= count { return now }
            try await Task.sleep(for: .milliseconds(5))
        }
        return all
    }
}

/// Waits (polling, up to 10 s) until `condition` holds; in a cancelled task, only spins a little.
func eventually(_ condition: () -> Bool) async throws {
    for _ in 0..<2_000 where !condition() {
        try? await Task.sleep(for: .milliseconds(5))
    }
}

/// What `body` returns or throws.
func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

extension Result {
    /// The error, if it failed.
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// The name of the type of `token`'s reason, `"nil"` when it is not cancelled.
func reasonName(_ token: CancellationToken) -> String {
    token.cancellationReason.map { String(describing: type(of: $0)) } ?? "nil"
}
