import FutureLibHTTPDeadline
import GRPCCore

/// What the `cancellationToken:` calls share: the deadline from the tokens, the call in a child task that the tokens
/// cancel, and the reason's `RPCError`.
///
/// ### One timer per call
/// When the tokens' deadline is the call's soonest, the tokens' own timer enforces it: the call goes to GRPCCore
/// without `CallOptions.timeout` and with the time left written as its `grpc-timeout` (rounded down, as
/// ``ClientCancellationInterceptor`` writes it). GRPCCore would otherwise run a second timer for the same instant,
/// in a task group of two child tasks of its own, beside the child task that the tokens cancel. When
/// `options.timeout` is sooner, GRPCCore enforces and sends it, as without a token.
enum OutboundCall {
    /// The longest timeout a call is given: the largest `grpc-timeout`, in hours.
    static let longest = Duration.seconds(GRPCTimeout.maximumValue * 3_600)

    /// Runs `call` bound by `explicit` and, inside a handler, the inbound RPC's token.
    ///
    /// - Parameters:
    ///   - explicit: The caller's token.
    ///   - options: The caller's options.
    ///   - call: The call, given the options to make it with and, when the tokens' deadline is the soonest, the
    ///     `grpc-timeout` value to write into its metadata (`options.timeout` is then `nil`).
    /// - Returns: What `call` returns.
    /// - Throws: What `call` throws, or the reason's `RPCError` once a token fired.
    static func run<T: Sendable>(
        _ explicit: CancellationToken,
        _ options: CallOptions,
        _ call: @Sendable (CallOptions, _ grpcTimeout: String?) async throws -> T
    ) async throws -> T {
        let inherited = RPCCancellation.current ?? .none
        // One token for both, linked only when both can fire: its deadline is the sooner of theirs.
        let linked: CancellationRequest? =
            explicit.canBeCancelled && inherited.canBeCancelled
            ? CancellationRequest(linkedTo: [explicit, inherited]) : nil
        let token = linked?.token ?? (explicit.canBeCancelled ? explicit : inherited)
        if let reason = token.cancellationReason { throw RPCError(cancellationReason: reason) }
        var options = options
        // GRPCCore adds the timeout to its clock's now and splits it into the wire's units, which traps on a timeout
        // near `Duration`'s largest and on a large negative one: none left, and the largest a `grpc-timeout` says,
        // mean the same on the wire.
        options.timeout = options.timeout.map { min(max($0, .zero), longest) }
        guard token.canBeCancelled else { return try await call(options, nil) }
        var grpcTimeout: String?
        var sent: Duration?
        if let left = token.timeRemaining, options.timeout.map({ left < $0 }) ?? true {
            // The token's timer fires at this deadline: GRPCCore needs no timer of its own for it.
            options.timeout = nil
            grpcTimeout = DeadlineHeader.grpcTimeout.fieldValue(for: left)
            sent = left
        }
        let callOptions = options
        let header = grpcTimeout
        let timeLeft = sent
        // The linked request lives until the call ends (its token alone would too; this says so).
        defer { withExtendedLifetime(linked) {} }
        do {
            return try await runInChildTask(cancelledBy: token) { try await call(callOptions, header) }
        } catch {
            if let header, let timeLeft { await awaitDueDeadline(of: token, after: error, sent: header, timeLeft) }
            throw ClientCancellationInterceptor.mapped(error, token)
        }
    }

    /// When the server ended the call `DEADLINE_EXCEEDED` at the deadline it was sent, the token's own: waits for the
    /// token's timer, so that the call ends with the token's reason, as when that timer ends it. The server's timer
    /// can run first: it starts later by the time the request took, but a busy machine can delay the token's timer
    /// more (the caller then saw the call fail while its token had not fired, e.g. Hummingbird's
    /// `RequestCancellationMiddleware` answering `500` rather than `504`). A `DEADLINE_EXCEEDED` while the token has
    /// time left (the server's own shorter deadline) is rethrown at once.
    ///
    /// - Parameters:
    ///   - token: The call's token.
    ///   - error: What the call threw.
    ///   - header: The `grpc-timeout` sent.
    ///   - timeLeft: The token's time left when it was written, which `header` says rounded down: the server's
    ///     deadline can come that much before the token's.
    private static func awaitDueDeadline(
        of token: CancellationToken,
        after error: any Error,
        sent header: String,
        _ timeLeft: Duration
    ) async {
        guard token.cancellationReason == nil, (error as? RPCError)?.code == .deadlineExceeded,
            let left = token.timeRemaining
        else { return }
        let rounding = DeadlineHeader.grpcTimeout.timeout(in: CollectionOfOne(header)).map { timeLeft - $0 } ?? .zero
        guard left <= max(rounding, .zero) else { return }
        await token.wait()
    }
}

extension Metadata {
    /// Writes `value`, if any, as the `grpc-timeout`.
    mutating func setGRPCTimeout(_ value: String?) {
        guard let value else { return }
        replaceOrAddString(value, forKey: DeadlineHeader.grpcTimeout.name)
    }
}
