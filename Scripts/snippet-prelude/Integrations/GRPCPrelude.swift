// Stubs for the blocks about FutureLibGRPC (its doc comments and the server guide's gRPC section), compiled by
// `Scripts/check-doc-snippets.py --integrations`. Type checking only: nothing here runs.

import FutureLibGRPC
import GRPCCore
import GRPCNIOTransportHTTP2

/// A codec of UTF-8 strings, as the examples' messages are.
struct UTF8Serializer: MessageSerializer {
    func serialize<Bytes: GRPCContiguousBytes>(_ message: String) throws -> Bytes { Bytes(Array(message.utf8)) }
}

struct UTF8Deserializer: MessageDeserializer {
    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> String {
        serializedMessageBytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}

/// A service with no methods: what the examples register.
struct GreeterService: RegistrableRPCService {
    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {}
}
