public import GRPCCore

// The four kinds of call, each with a token: the same as GRPCCore's methods, plus `cancellationToken:`. They share
// `OutboundCall.run`.
extension GRPCClient {
    /// Makes a unary call that the token bounds: its time left is the call's timeout, its cancellation cancels the
    /// call in flight (the server sees its stream reset). Inside a handler, the inbound RPC's token also does.
    ///
    /// ```swift
    /// func greet(_ client: GRPCClient<HTTP2ClientTransport.Posix>, token: CancellationToken) async throws -> String {
    ///     try await client.unary(
    ///         request: ClientRequest(message: "Ada"),
    ///         descriptor: MethodDescriptor(fullyQualifiedService: "Greeter", method: "Greet"),
    ///         serializer: UTF8Serializer(),
    ///         deserializer: UTF8Deserializer(),
    ///         cancellationToken: token
    ///     ) { try $0.message }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// - **Timeout**: `options.timeout`, the token's time left and, inside a handler, the inbound deadline's: the
    ///   soonest. It goes out as `grpc-timeout` and is enforced here: by GRPCCore when it is `options.timeout`, else
    ///   by the token's own timer (one timer per call, not two; the time left is written rounded down). A negative
    ///   `options.timeout` counts as zero and none goes past the largest `grpc-timeout` (99,999,999 hours):
    ///   GRPCCore alone traps on `.seconds(Int64.min)` and on `Duration(attoseconds: .max)`.
    /// - **Cancellation**: when the token (or, inside a handler, the inbound RPC's token) fires, the call runs in a
    ///   child task that is cancelled: the stream is reset; the caller's task is not cancelled.
    /// - **Outcome**: a call stopped by a token throws `RPCError` with the reason's code (`CANCELLED`,
    ///   `DEADLINE_EXCEEDED`, `UNAVAILABLE`; ``GRPCCore/RPCError/Code/init(cancellationReason:)``) and the reason as
    ///   its `cause`; the token's `cancellationReason` says the same. A timeout that GRPCCore enforces first is its
    ///   own `DEADLINE_EXCEEDED`. A server's `DEADLINE_EXCEEDED` at the token's deadline (its timer ran before the
    ///   token's) ends the call once the token's timer fired, with the token's reason. A token already cancelled
    ///   makes no call.
    /// - Inside ``RPCCancellation/detached(_:)``, only `cancellationToken` counts.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - descriptor: The method.
    ///   - serializer: The request's serializer.
    ///   - deserializer: The response's deserializer.
    ///   - options: The call's options; its timeout is lowered to the token's.
    ///   - cancellationToken: The token that bounds the call.
    ///   - handleResponse: What to do with the response.
    /// - Returns: What `handleResponse` returns.
    /// - Throws: `RPCError`: the call's, or the reason's when a token stopped it.
    public func unary<Request, Response, ReturnValue: Sendable>(
        request: ClientRequest<Request>,
        descriptor: MethodDescriptor,
        serializer: some MessageSerializer<Request>,
        deserializer: some MessageDeserializer<Response>,
        options: CallOptions = .defaults,
        cancellationToken: CancellationToken,
        onResponse handleResponse:
            @concurrent @Sendable @escaping (ClientResponse<Response>) async throws -> ReturnValue
    ) async throws -> ReturnValue {
        try await OutboundCall.run(cancellationToken, options) { options, grpcTimeout in
            var request = request
            request.metadata.setGRPCTimeout(grpcTimeout)
            return try await self.unary(
                request: request,
                descriptor: descriptor,
                serializer: serializer,
                deserializer: deserializer,
                options: options,
                onResponse: handleResponse
            )
        }
    }

    /// Makes a client-streaming call that the token bounds, as
    /// ``unary(request:descriptor:serializer:deserializer:options:cancellationToken:onResponse:)`` does.
    ///
    /// ```swift
    /// func upload(_ client: GRPCClient<HTTP2ClientTransport.Posix>, token: CancellationToken) async throws -> String {
    ///     try await client.clientStreaming(
    ///         request: StreamingClientRequest { writer in try await writer.write(contentsOf: ["a", "b"]) },
    ///         descriptor: MethodDescriptor(fullyQualifiedService: "Store", method: "Upload"),
    ///         serializer: UTF8Serializer(),
    ///         deserializer: UTF8Deserializer(),
    ///         cancellationToken: token
    ///     ) { try $0.message }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request stream.
    ///   - descriptor: The method.
    ///   - serializer: The request's serializer.
    ///   - deserializer: The response's deserializer.
    ///   - options: The call's options; its timeout is lowered to the token's.
    ///   - cancellationToken: The token that bounds the call.
    ///   - handleResponse: What to do with the response.
    /// - Returns: What `handleResponse` returns.
    /// - Throws: `RPCError`: the call's, or the reason's when a token stopped it.
    public func clientStreaming<Request, Response, ReturnValue: Sendable>(
        request: StreamingClientRequest<Request>,
        descriptor: MethodDescriptor,
        serializer: some MessageSerializer<Request>,
        deserializer: some MessageDeserializer<Response>,
        options: CallOptions = .defaults,
        cancellationToken: CancellationToken,
        onResponse handleResponse:
            @concurrent @Sendable @escaping (ClientResponse<Response>) async throws -> ReturnValue
    ) async throws -> ReturnValue {
        try await OutboundCall.run(cancellationToken, options) { options, grpcTimeout in
            var request = request
            request.metadata.setGRPCTimeout(grpcTimeout)
            return try await self.clientStreaming(
                request: request,
                descriptor: descriptor,
                serializer: serializer,
                deserializer: deserializer,
                options: options,
                onResponse: handleResponse
            )
        }
    }

    /// Makes a server-streaming call that the token bounds, reading included, as
    /// ``unary(request:descriptor:serializer:deserializer:options:cancellationToken:onResponse:)`` does.
    ///
    /// ```swift
    /// func watch(_ client: GRPCClient<HTTP2ClientTransport.Posix>, token: CancellationToken) async throws -> Int {
    ///     try await client.serverStreaming(
    ///         request: ClientRequest(message: "prices"),
    ///         descriptor: MethodDescriptor(fullyQualifiedService: "Ticker", method: "Watch"),
    ///         serializer: UTF8Serializer(),
    ///         deserializer: UTF8Deserializer(),
    ///         cancellationToken: token
    ///     ) { response in
    ///         var count = 0
    ///         for try await _ in response.messages { count += 1 }
    ///         return count
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - descriptor: The method.
    ///   - serializer: The request's serializer.
    ///   - deserializer: The response's deserializer.
    ///   - options: The call's options; its timeout is lowered to the token's.
    ///   - cancellationToken: The token that bounds the call.
    ///   - handleResponse: What to do with the response stream.
    /// - Returns: What `handleResponse` returns.
    /// - Throws: `RPCError`: the call's, or the reason's when a token stopped it.
    public func serverStreaming<Request, Response, ReturnValue: Sendable>(
        request: ClientRequest<Request>,
        descriptor: MethodDescriptor,
        serializer: some MessageSerializer<Request>,
        deserializer: some MessageDeserializer<Response>,
        options: CallOptions = .defaults,
        cancellationToken: CancellationToken,
        onResponse handleResponse:
            @concurrent @Sendable @escaping (StreamingClientResponse<Response>) async throws -> ReturnValue
    ) async throws -> ReturnValue {
        try await OutboundCall.run(cancellationToken, options) { options, grpcTimeout in
            var request = request
            request.metadata.setGRPCTimeout(grpcTimeout)
            return try await self.serverStreaming(
                request: request,
                descriptor: descriptor,
                serializer: serializer,
                deserializer: deserializer,
                options: options,
                onResponse: handleResponse
            )
        }
    }

    /// Makes a bidirectional-streaming call that the token bounds, as
    /// ``unary(request:descriptor:serializer:deserializer:options:cancellationToken:onResponse:)`` does.
    ///
    /// ```swift
    /// func chat(_ client: GRPCClient<HTTP2ClientTransport.Posix>, token: CancellationToken) async throws -> [String] {
    ///     try await client.bidirectionalStreaming(
    ///         request: StreamingClientRequest { writer in try await writer.write("hello") },
    ///         descriptor: MethodDescriptor(fullyQualifiedService: "Chat", method: "Talk"),
    ///         serializer: UTF8Serializer(),
    ///         deserializer: UTF8Deserializer(),
    ///         cancellationToken: token
    ///     ) { response in
    ///         var lines: [String] = []
    ///         for try await line in response.messages { lines.append(line) }
    ///         return lines
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request stream.
    ///   - descriptor: The method.
    ///   - serializer: The request's serializer.
    ///   - deserializer: The response's deserializer.
    ///   - options: The call's options; its timeout is lowered to the token's.
    ///   - cancellationToken: The token that bounds the call.
    ///   - handleResponse: What to do with the response stream.
    /// - Returns: What `handleResponse` returns.
    /// - Throws: `RPCError`: the call's, or the reason's when a token stopped it.
    public func bidirectionalStreaming<Request, Response, ReturnValue: Sendable>(
        request: StreamingClientRequest<Request>,
        descriptor: MethodDescriptor,
        serializer: some MessageSerializer<Request>,
        deserializer: some MessageDeserializer<Response>,
        options: CallOptions = .defaults,
        cancellationToken: CancellationToken,
        onResponse handleResponse:
            @concurrent @Sendable @escaping (StreamingClientResponse<Response>) async throws -> ReturnValue
    ) async throws -> ReturnValue {
        try await OutboundCall.run(cancellationToken, options) { options, grpcTimeout in
            var request = request
            request.metadata.setGRPCTimeout(grpcTimeout)
            return try await self.bidirectionalStreaming(
                request: request,
                descriptor: descriptor,
                serializer: serializer,
                deserializer: deserializer,
                options: options,
                onResponse: handleResponse
            )
        }
    }
}
