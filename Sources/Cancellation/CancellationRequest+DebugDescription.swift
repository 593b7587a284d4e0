// Debug descriptions of requests and tokens: what `po request` or `print(String(reflecting: token))`
// shows. Each reads the request's state once, under its lock (O(n) in the handlers): for
// debugging and logs, not for hot paths.

extension CancellationRequest: CustomDebugStringConvertible {
    /// The request's state: whether it is cancelled, how many handlers wait, and what can still
    /// cancel it.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// request.token.onCancel { print("stopping") }
    /// print(String(reflecting: request))
    /// // CancellationRequest(active; 1 handler registered; cancellable by: its request)
    /// ```
    public var debugDescription: String {
        "CancellationRequest(\(core.debugSnapshot.summary))"
    }
}

extension CancellationToken: CustomDebugStringConvertible {
    /// The state of the token's request: whether it is cancelled, how many handlers wait, and
    /// what keeps it cancellable (its request object, a pending timer, a live source link).
    ///
    /// ```swift
    /// let token = CancellationRequest(cancelAfter: .seconds(30)).token
    /// print(String(reflecting: token))
    /// // CancellationToken(active; 0 handlers registered; cancellable by: a pending timer)
    /// ```
    public var debugDescription: String {
        guard let core else { return "CancellationToken.none" }
        if core === CancellationCore.alreadyCancelled { return "CancellationToken.cancelled" }
        return "CancellationToken(\(core.debugSnapshot.summary))"
    }
}

/// One reading of a request's state, taken under its lock, for the debug descriptions.
struct CancellationDebugSnapshot {
    var phase: CancellationState.Phase
    var handlers: Int
    var hasTimer: Bool
    var isLinked: Bool
    var isRequestReleased: Bool

    /// `active; 2 handlers registered; cancellable by: its request, a pending timer`.
    var summary: String {
        switch phase {
        case .cancelling:
            return "cancelling; \(Self.count(handlers, "handler")) left to run"
        case .cancelled:
            return "cancelled"
        case .abandoned:
            return "can no longer be cancelled"
        case .active:
            var keepers: [String] = []
            if !isRequestReleased { keepers.append("its request") }
            if hasTimer { keepers.append("a pending timer") }
            if isLinked { keepers.append("a live source link") }
            let by = keepers.isEmpty ? "nothing" : keepers.joined(separator: ", ")
            return "active; \(Self.count(handlers, "handler")) registered; cancellable by: \(by)"
        }
    }

    private static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}
