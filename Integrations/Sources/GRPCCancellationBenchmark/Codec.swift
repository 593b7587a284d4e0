import GRPCCore

/// A hand-written codec: messages are UTF-8 strings, so the demo needs no generated code.
struct UTF8Serializer: MessageSerializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: String) throws -> Bytes {
        Bytes(Array(message.utf8))
    }
}

/// The decoder of ``UTF8Serializer``'s messages.
struct UTF8Deserializer: MessageDeserializer {
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> String {
        serializedMessageBytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}

/// The one method of the gRPC services: a request's label in, an answer out.
let workMethod = MethodDescriptor(fullyQualifiedService: "demo.Work", method: "Do")

/// A service whose one unary method runs `handle` with the request's message.
struct WorkService: RegistrableRPCService {
    let handle: @Sendable (String) async throws -> String

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
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
