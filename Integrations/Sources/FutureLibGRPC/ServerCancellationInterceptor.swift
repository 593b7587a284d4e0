import FutureLibHTTPDeadline
public import GRPCCore

/// Gives every RPC handler a token (``RPCCancellation/token``) that is cancelled when the client cancels the RPC,
/// when its deadline (`grpc-timeout`) passes, or when the server shuts down gracefully, each with its reason; ends
/// an RPC whose handler failed because of it with the status of the reason. The handler's task is left alone unless
/// you ask for it (`cancelsHandlerTask: true`).
///
/// ```swift
/// let cancellation = ServerCancellationInterceptor()
/// let server = GRPCServer(
///     transport: .http2NIOPosix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext),
///     services: [GreeterService()],
///     interceptors: [cancellation]
/// )
/// ```
///
/// ### Semantics
/// - **Client gone** (reason ``RPCCancelledByClientError``): the client reset the RPC's stream (it cancelled the
///   call) or its connection closed. GRPCCore's `ServerContext.cancellation` handle is the signal.
/// - **Deadline** (reason `DeadlineExceededError`): the `grpc-timeout` the client sent, from when the interceptor
///   runs, read by `FutureLibHTTPDeadline`'s `GRPCTimeout` (sent more than once: the smallest; a value it cannot
///   read: no deadline). A value of 8 digits counts, though GRPCCore ignores it (its parser reads at most 7): the
///   token fires at it even where GRPCCore's handle does not. A handle that fires in the last half of the timeout
///   (at most 1 s before it) counts as the deadline: GRPCCore's own timer for the same timeout starts earlier and
///   fires first, and a client that gives up at its deadline resets the stream before the server's deadline by the
///   time the request took to arrive.
/// - **Graceful shutdown** (reason `GracefulShutdownError`): ``beginGracefulShutdown()`` (the tokens fire before it
///   returns), the `ServiceGroup` that runs the server shutting down gracefully (the first RPC starts a task that holds
///   one handler for the server; swift-service-lifecycle runs it inside its lock, so the tokens fire just after,
///   from a task of their own), or `shutdown` cancelled (its own reason then). An RPC that starts once the shutdown
///   has begun is cancelled before its handler runs. A handle that fires once the shutdown has begun counts as it.
///   Call ``beginGracefulShutdown()`` *before* `server.beginGracefulShutdown()`: the transport cancels the RPCs'
///   handles when it quiesces, which alone would read as the client (in a `ServiceGroup`, if the server's own
///   handler runs first).
/// - The token covers the handler until it returns and, for a streaming response, until its producer returns.
/// - **Status.** Once the token is cancelled, whatever the handler throws ends the RPC with
///   ``GRPCCore/RPCError/Code/init(cancellationReason:)``: `DEADLINE_EXCEEDED`, `CANCELLED` or `UNAVAILABLE`, with
///   the reason as the error's `cause`; never `UNKNOWN`. A handler that returns normally keeps its answer.
/// - **The handler's task.** GRPCCore never cancels it, and by default neither does the interceptor: the handler
///   runs in the RPC's own task, and the token stops what it was handed to (`withCancellation(_:operation:)`
///   brings it to code written for task cancellation). With
///   `cancelsHandlerTask: true` the handler runs in a child task that the token cancels, so code that ignores the
///   token still stops at its next cancellable `await`; that child task costs each RPC allocations and time.
/// - **One per server.** An interceptor follows the graceful shutdown of the `ServiceGroup` its first RPC runs in
///   (one task per interceptor waits for it, keeping that RPC's task-local values until the shutdown begins or the
///   interceptor is released), and its shutdown ends every RPC it serves: share none between servers, and make a
///   new one for a server that starts again.
/// - Calls made inside the handler inherit the token (``RPCCancellation``): install ``ClientCancellationInterceptor``
///   on the `GRPCClient`, or pass the token to the `cancellationToken:` calls.
public struct ServerCancellationInterceptor: ServerInterceptor {
    /// A token that also cancels every RPC, beside ``beginGracefulShutdown()``.
    public let shutdown: CancellationToken
    /// Whether the handler's task is cancelled when its token fires.
    public let cancelsHandlerTask: Bool
    /// The server's shutdown, which every RPC's token is linked to.
    let serverShutdown: ServerShutdown

    /// The server's shutdown request, to which each RPC in flight is linked (for the tests' count of the links).
    var serverShutdownRequest: CancellationRequest { serverShutdown.request }

    /// Creates the interceptor; install one per server: its shutdown is that server's.
    ///
    /// ```swift
    /// let cancellation = ServerCancellationInterceptor(cancelsHandlerTask: true)
    /// ```
    ///
    /// - Parameters:
    ///   - shutdown: A token that also cancels every RPC; `.none` by default.
    ///   - cancelsHandlerTask: Cancel the handler's task when the token fires; `false` by default.
    public init(shutdown: CancellationToken = .none, cancelsHandlerTask: Bool = false) {
        self.shutdown = shutdown
        self.cancelsHandlerTask = cancelsHandlerTask
        serverShutdown = ServerShutdown(also: shutdown)
    }

    /// Cancels the token of every RPC in flight, and of every RPC that starts later, with
    /// `GracefulShutdownError`. Call it just before `server.beginGracefulShutdown()`.
    ///
    /// ```swift
    /// func stop(_ server: GRPCServer<HTTP2ServerTransport.Posix>, _ cancellation: ServerCancellationInterceptor) {
    ///     cancellation.beginGracefulShutdown()
    ///     server.beginGracefulShutdown()
    /// }
    /// ```
    public func beginGracefulShutdown() {
        serverShutdown.begin()
    }

    // `@concurrent`, as GRPCCore's protocol (built without nonisolated(nonsending) by default) declares it.
    /// Runs the RPC with its token in ``RPCCancellation``.
    @concurrent public func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingServerRequest<Input>,
        context: ServerContext,
        next:
            @concurrent @Sendable (StreamingServerRequest<Input>, ServerContext) async throws
            -> StreamingServerResponse<Output>
    ) async throws -> StreamingServerResponse<Output> {
        let header = DeadlineHeader.grpcTimeout
        let timeout = header.timeout(in: request.metadata[stringValues: header.name])
        serverShutdown.watchServiceGroup()
        let rpc = InboundRPC(timeout: timeout, shutdown: serverShutdown, cancelsTask: cancelsHandlerTask)
        // Made once, for both scopes.
        let onCancelRPC = rpc.onCancelRPC
        var response = try await rpc.run(onCancelRPC: onCancelRPC) { try await next(request, context) }
        switch response.accepted {
        case .success(var contents):
            let producer = contents.producer
            contents.producer = { writer in
                try await rpc.run(onCancelRPC: onCancelRPC) { try await producer(writer) }
            }
            response.accepted = .success(contents)
        case .failure(let error):
            if let mapped = rpc.mapped(error) as? RPCError { response.accepted = .failure(mapped) }
        }
        return response
    }
}
