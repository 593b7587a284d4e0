import GRPCCore

/// What the `cancellationToken:` calls share: the timeout from the tokens, the call in a child task that the tokens
/// cancel, and the reason's `RPCError`.
enum OutboundCall {
    static func run<T: Sendable>(
        _ explicit: CancellationToken,
        _ options: CallOptions,
        _ call: @Sendable @escaping (CallOptions) async throws -> T
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
        guard token.canBeCancelled else { return try await call(options) }
        let callOptions = options
        // The linked request lives until the call ends (its token alone would too; this says so).
        defer { withExtendedLifetime(linked) {} }
        do {
            return try await withThrowingTaskGroup(of: T.self) { group in
                group.addTask { try await withCancellation(token) { try await call(callOptions) } }
                guard let value = try await group.next() else { throw CancellationError() }
                return value
            }
        } catch {
            throw ClientCancellationInterceptor.mapped(error, token)
        }
    }
}
