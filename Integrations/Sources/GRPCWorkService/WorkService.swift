// The one gRPC service the demo (`make demo-services`) and the benchmark (`make bench-grpc`) run: a unary method
// whose messages are UTF-8 strings, so neither needs generated code.
public import GRPCCore

/// A hand-written codec: messages are UTF-8 strings, so the demo needs no generated code.
public struct UTF8Serializer: MessageSerializer {
    /// A serializer.
    public init() {}

    /// The message's UTF-8 bytes.
    public func serialize<Bytes: GRPCContiguousBytes>(_ message: String) throws -> Bytes {
        Bytes(Array(message.utf8))
    }
}

/// The decoder of ``UTF8Serializer``'s messages.
public struct UTF8Deserializer: MessageDeserializer {
    /// A deserializer.
    public init() {}

    /// The bytes read as UTF-8.
    public func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> String {
        serializedMessageBytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}

/// The one method of the gRPC services: a request's label in, an answer out.
public let workMethod = MethodDescriptor(fullyQualifiedService: "demo.Work", method: "Do")

/// A service whose one unary method runs `handle` with the request's message.
public struct WorkService: RegistrableRPCService {
    let handle: @Sendable (String) async throws -> String

    /// A service that answers each request with what `handle` returns for its message.
    public init(handle: @escaping @Sendable (String) async throws -> String) { self.handle = handle }

    /// Registers the one method, ``workMethod``.
    public func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        let handle = self.handle
        router.registerHandler(
            forMethod: workMethod,
            deserializer: UTF8Deserializer(),
            serializer: UTF8Serializer()
        ) { request, _ in
            let message = try await ServerRequest(stream: request).message
            return StreamingServerResponse(single: ServerResponse(message: try await handle(message)))
        }
    }
}
