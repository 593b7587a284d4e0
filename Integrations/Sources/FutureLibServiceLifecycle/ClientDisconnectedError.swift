/// The reason a request's token gives when the client's connection closed (or the client closed its side of it)
/// while the handler ran: nobody is left to read the response.
///
/// The server adapters (`FutureLibHummingbird`, `FutureLibVapor`) cancel their request tokens with it, so code
/// that stopped can tell a client gone from a deadline or a shutdown, whatever the framework:
///
/// ```swift
/// func logStop(of token: CancellationToken) {
///     if token.cancellationReason is ClientDisconnectedError {
///         print("client went away")
///     }
/// }
/// ```
public struct ClientDisconnectedError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Creates the reason.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// request.cancel(reason: ClientDisconnectedError())
    /// ```
    public init() {}

    /// `client disconnected`.
    public var description: String { "client disconnected" }
}
