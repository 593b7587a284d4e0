import FutureLibHTTPDeadline
import GRPCCore

/// What the `cancellationToken:` calls share: the timeout from the tokens, the call in a child task that the tokens
/// cancel, and the reason's `RPCError`.
enum OutboundCall {
    /// The longest timeout a call is given: the largest `grpc-timeout`, in hours.
    static let longest = Duration.seconds(GRPCTimeout.maximumValue * 3_600)

    static func run<T: Sendable>(
        _ explicit: CancellationToken,
        _ options: CallOptions,
        _ call: @Sendable (CallOptions) async throws -> T
    ) async throws -> T {
        let inherited = RPCCancellation.current ?? .none
        // One token for both, linked only when both can fire: its deadline is the sooner of theirs.
        let linked: CancellationRequest? =
            explicit.canBeCancelled && inherited.canBeCancelled
            ? CancellationRequest(linkedTo: [explicit, inherited]) : nil
        let token = linked?.token ?? (explicit.canBeCancelled ? explicit : inherited)
        if let reason = token.cancellationReason { throw RPCError(cancellationReason: reason) }
        var options = options
        if let left = token.timeRemaining {
            options.timeout = options.timeout.map { min($0, left) } ?? left
        }
        // GRPCCore adds the timeout to its clock's now and splits it into the wire's units, which traps on a timeout
        // near `Duration`'s largest and on a large negative one: none left, and the largest a `grpc-timeout` says,
        // mean the same on the wire.
        options.timeout = options.timeout.map { min(max($0, .zero), longest) }
        guard token.canBeCancelled else { return try await call(options) }
        let callOptions = options
        // The linked request lives until the call ends (its token alone would too; this says so).
        defer { withExtendedLifetime(linked) {} }
        do {
            return try await runInChildTask(cancelledBy: token) { try await call(callOptions) }
        } catch {
            throw ClientCancellationInterceptor.mapped(error, token)
        }
    }
}
