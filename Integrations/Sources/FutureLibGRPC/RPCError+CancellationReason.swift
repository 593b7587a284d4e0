public import GRPCCore

extension RPCError.Code {
    /// The status code that ends an RPC stopped by a token cancelled for `reason`: `deadlineExceeded` for
    /// `DeadlineExceededError`, `unavailable` for `GracefulShutdownError`, `cancelled` for any other reason
    /// (``RPCCancelledByClientError``, a plain `cancel()`'s `CancellationError`, a reason of your own). Never
    /// `unknown`.
    ///
    /// ```swift
    /// let code = RPCError.Code(cancellationReason: DeadlineExceededError())
    /// assert(code == .deadlineExceeded)
    /// ```
    ///
    /// - Parameter reason: A token's `cancellationReason`.
    public init(cancellationReason reason: any Error) {
        switch reason {
        case is DeadlineExceededError: self = .deadlineExceeded
        case is GracefulShutdownError: self = .unavailable
        default: self = .cancelled
        }
    }
}

extension RPCError {
    /// The error an RPC stopped by a token ends with: the code of its reason, the reason as its cause.
    init(cancellationReason reason: any Error) {
        self.init(code: Code(cancellationReason: reason), message: "RPC cancelled: \(reason)", cause: reason)
    }
}
