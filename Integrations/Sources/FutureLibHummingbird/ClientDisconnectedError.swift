public import HTTPTypes

// `ClientDisconnectedError` itself lives in FutureLibServiceLifecycle (re-exported), shared with FutureLibVapor, so
// that a reason reads the same whatever the framework; here is what Hummingbird answers for it.

extension HTTPResponse.Status {
    /// `499 Client Closed Request` (nginx's code; not in the HTTP standard), the status logged for a request whose
    /// client went away before the response.
    ///
    /// ```swift
    /// let response = Response(status: .clientClosedRequest)
    /// ```
    public static var clientClosedRequest: HTTPResponse.Status {
        .init(code: 499, reasonPhrase: "Client Closed Request")
    }

    /// The status that answers a request stopped for `reason`: `499` for `ClientDisconnectedError`, `504 Gateway
    /// Timeout` for `DeadlineExceededError`, `503 Service Unavailable` for `GracefulShutdownError`; `nil` for any
    /// other reason (a plain `cancel()` gives `CancellationError`).
    ///
    /// ```swift
    /// func answer(stoppedBy token: CancellationToken) -> Response? {
    ///     guard let reason = token.cancellationReason else { return nil }
    ///     return HTTPResponse.Status(cancellationReason: reason).map { Response(status: $0) }
    /// }
    /// ```
    ///
    /// - Parameter reason: A token's `cancellationReason`.
    public init?(cancellationReason reason: any Error) {
        switch reason {
        case is ClientDisconnectedError: self = .clientClosedRequest
        case is DeadlineExceededError: self = .gatewayTimeout
        case is GracefulShutdownError: self = .serviceUnavailable
        default: return nil
        }
    }
}
