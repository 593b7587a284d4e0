/// The reason an RPC's token gives when the client cancelled the RPC (its stream was reset, or its connection
/// closed) while the handler ran: nobody is left to read the response.
///
/// ```swift
/// func log(_ error: any Error) {
///     if RPCCancellation.token.cancellationReason is RPCCancelledByClientError {
///         print("client went away")
///     }
/// }
/// ```
///
/// The HTTP adapters' `ClientDisconnectedError` is the same event on HTTP/1.1, where the only signal is a closed
/// connection; gRPC cancels one stream of a connection that stays open, hence a reason of its own.
public struct RPCCancelledByClientError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Creates the reason.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// request.cancel(reason: RPCCancelledByClientError())
    /// ```
    public init() {}

    /// `RPC cancelled by the client`.
    public var description: String { "RPC cancelled by the client" }
}
