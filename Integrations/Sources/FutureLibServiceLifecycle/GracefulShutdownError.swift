/// The reason a graceful-shutdown token gives: the service group is shutting down gracefully.
///
/// ``withGracefulShutdownToken(_:)`` and ``withTaskCancellationOrGracefulShutdownToken(_:)`` cancel their token
/// with it, so code that stopped can tell a shutdown from a deadline or a client that went away, for example to
/// answer `503 Service Unavailable`:
///
/// ```swift
/// func status(after error: any Error, token: CancellationToken) -> Int {
///     switch token.cancellationReason {
///     case is GracefulShutdownError: 503
///     case is DeadlineExceededError: 504
///     default: 500
///     }
/// }
/// ```
///
/// Futures and streams a token cancels still fail with `CancellationError`; the reason is read from the token.
public struct GracefulShutdownError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Creates the reason.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// request.cancel(reason: GracefulShutdownError())
    /// ```
    public init() {}

    /// `graceful shutdown`.
    public var description: String { "graceful shutdown" }
}
