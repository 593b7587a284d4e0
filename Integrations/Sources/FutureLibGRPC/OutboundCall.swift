import GRPCCore

/// What the `cancellationToken:` calls share: the timeout from the tokens, the call in a child task that the tokens
/// cancel, and the reason's `RPCError`.
enum OutboundCall {
    static func run<T: Sendable>(
        _ explicit: CancellationToken,
        _ options: CallOptions,
        _ call: @Sendable @escaping (CallOptions) async throws -> T
    ) async throws -> T {
        let inherited = RPCCancellation.current
        let inboundToken = inherited?.token ?? .none
        // One token for both, linked only when both can fire.
        let linked: CancellationRequest? =
            explicit.canBeCancelled && inboundToken.canBeCancelled
            ? CancellationRequest(linkedTo: [explicit, inboundToken]) : nil
        let token = linked?.token ?? (explicit.canBeCancelled ? explicit : inboundToken)
        if let reason = token.cancellationReason { throw RPCError(cancellationReason: reason) }
        var options = options
        let deadlines = [inherited?.deadline, timeRemaining(of: explicit).map { ContinuousClock.now + $0 }]
        if let deadline = deadlines.compactMap({ $0 }).min() {
            let left = max(ContinuousClock.now.duration(to: deadline), .zero)
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

    /// The time left until a timer cancels `token`.
    // Shim until the `Cancellation` module's `CancellationToken.timeRemaining` is merged: no token says its deadline
    // yet, so only the inbound RPC's deadline (which the interceptor knows) is sent.
    static func timeRemaining(of token: CancellationToken) -> Duration? {
        nil
    }
}
