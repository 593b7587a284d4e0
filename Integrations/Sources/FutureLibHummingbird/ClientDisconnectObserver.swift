public import HummingbirdCore
import NIOConcurrencyHelpers
public import NIOCore

/// A channel handler that tells the request in flight on its connection that the client went away: the connection
/// closed, or the client closed its side of it (read end-of-file); and that the server shuts down gracefully.
///
/// Hummingbird does not cancel a handler's task when its client disconnects, and its handler reads nothing from the
/// connection while the handler runs. This handler sits in the connection's pipeline (after HTTP decoding), where it
/// sees the end of the connection as soon as NIO reads it, and cancels the token of the request it watches (the
/// newest on the connection: its request context made the token, ``RequestCancellation/init(source:)``), with the
/// reason `ClientDisconnectedError`. It does nothing else: it reads,
/// writes and closes nothing, so keep-alive connections stay open. Install it with
/// ``HummingbirdCore/HTTPServerBuilder/http1ObservingClientDisconnects(configuration:)``, or add it to
/// `HTTP1Channel.Configuration.additionalChannelHandlers` yourself:
///
/// ```swift
/// let app = Application(
///     router: router,
///     server: .http1(configuration: .init(additionalChannelHandlers: [ClientDisconnectObserver()]))
/// )
/// ```
///
/// ### Semantics
/// - A client that closes its side of the connection (a half-close) counts as gone: Hummingbird allows half-closed
///   connections, and an HTTP/1.1 client that stops sending does not wait for an answer in practice.
/// - NIO reads the end of the connection only while it reads from it: a handler that leaves a large request body
///   unread (more than NIO's read-ahead of a few parts) learns of the disconnect only once it reads the body.
/// - A request that starts on a connection already gone is cancelled before its handler runs.
/// - The server's graceful shutdown reaches the connection as NIO's `ChannelShouldQuiesceEvent` (Hummingbird's
///   server quiesces its connections when its `ServiceGroup` shuts it down gracefully): the request in flight, and
///   every later one on the connection, is cancelled with `GracefulShutdownError`. So a request on an observed
///   connection needs no graceful-shutdown handler of its own.
public final class ClientDisconnectObserver: ChannelInboundHandler, RemovableChannelHandler {
    /// Passed through untouched.
    public typealias InboundIn = NIOAny

    private let connection = ClientConnection()

    /// Creates the handler; make one per connection.
    ///
    /// ```swift
    /// import HummingbirdCore
    ///
    /// var configuration = HTTP1Channel.Configuration()
    /// configuration.additionalChannelHandlers = { [ClientDisconnectObserver()] }
    /// ```
    public init() {}

    /// Registers the connection so that the requests arriving on it find it.
    public func handlerAdded(context: ChannelHandlerContext) {
        ClientConnection.register(connection, for: context.channel)
    }

    /// Unregisters the connection.
    public func handlerRemoved(context: ChannelHandlerContext) {
        ClientConnection.unregister(context.channel)
        connection.clientWentAway()
    }

    /// The connection closed: cancels the request in flight.
    public func channelInactive(context: ChannelHandlerContext) {
        connection.clientWentAway()
        context.fireChannelInactive()
    }

    /// The client closed its side of the connection, or the server quiesces it (graceful shutdown): cancels the
    /// request in flight.
    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            connection.clientWentAway()
        } else if event is ChannelShouldQuiesceEvent {
            connection.shutDown()
        }
        context.fireUserInboundEventTriggered(event)
    }
}

@available(*, unavailable)
extension ClientDisconnectObserver: Sendable {}

extension ClientDisconnectObserver {
    /// How many connections have an observer now (for the tests and the soak: it returns to zero once every
    /// connection closed).
    package static var observedConnections: Int { ClientConnection.registeredCount }
}

extension HTTPServerBuilder {
    /// An HTTP/1.1 server whose connections each have a ``ClientDisconnectObserver``, so that a request's token
    /// (`context.cancellation.token`) is cancelled when its client goes away.
    ///
    /// ```swift
    /// let app = Application(
    ///     router: router,
    ///     server: .http1ObservingClientDisconnects(configuration: .init(idleTimeout: .seconds(60)))
    /// )
    /// ```
    ///
    /// - Parameter configuration: Hummingbird's HTTP/1.1 configuration; the observer is added after its
    ///   `additionalChannelHandlers`.
    /// - Returns: The server builder for `Application(router:server:)`.
    public static func http1ObservingClientDisconnects(
        configuration: HTTP1Channel.Configuration = .init()
    ) -> HTTPServerBuilder {
        var configuration = configuration
        let additional = configuration.additionalChannelHandlers
        configuration.additionalChannelHandlers = { additional() + [ClientDisconnectObserver()] }
        return .http1(configuration: configuration)
    }
}

/// What the requests of one connection and its ``ClientDisconnectObserver`` share: whether the client went away or
/// the server quiesced the connection, and the request in flight (Hummingbird serves one request at a time per
/// HTTP/1.1 connection).
final class ClientConnection: Sendable {
    private struct State {
        var isGone = false
        var isShuttingDown = false
        var inFlight: CancellationRequest?
    }

    // NIO's lock, which ThreadSanitizer sees (the standard library's `Mutex` it does not, on Linux).
    private let state = NIOLockedValueBox(State())

    /// Cancels `request` when the client goes away or the server quiesces the connection while it is in flight (or
    /// at once if either already happened).
    func watch(_ request: CancellationRequest) {
        // A request still in the slot (one never unwatched) leaves the lock before it is released: dropping its
        // last reference can release its handlers (user code).
        let (reason, replaced): ((any Error)?, CancellationRequest?) = state.withLockedValue { state in
            if state.isGone { return (ClientDisconnectedError(), nil) }
            if state.isShuttingDown { return (GracefulShutdownError(), nil) }
            defer { state.inFlight = request }
            return (nil, state.inFlight)
        }
        _ = replaced
        if let reason { request.cancel(reason: reason) }
    }

    /// Stops watching `request` (its handler returned).
    func unwatch(_ request: CancellationRequest) {
        // The request leaves the lock before it is released (the caller still holds it anyway).
        let removed: CancellationRequest? = state.withLockedValue { state in
            guard state.inFlight === request else { return nil }
            defer { state.inFlight = nil }
            return state.inFlight
        }
        _ = removed
    }

    /// The client went away: cancels the request in flight, outside the lock, and every later one at once.
    func clientWentAway() {
        let inFlight: CancellationRequest? = state.withLockedValue { state in
            state.isGone = true
            defer { state.inFlight = nil }
            return state.inFlight
        }
        inFlight?.cancel(reason: ClientDisconnectedError())
    }

    /// The server quiesces the connection (graceful shutdown): cancels the request in flight, outside the lock, and
    /// every later one at once, with `GracefulShutdownError`.
    func shutDown() {
        let inFlight: CancellationRequest? = state.withLockedValue { state in
            state.isShuttingDown = true
            defer { state.inFlight = nil }
            return state.inFlight
        }
        inFlight?.cancel(reason: GracefulShutdownError())
    }

    // The connections by channel: a request context finds its connection from the channel Hummingbird hands it
    // (`ApplicationRequestContextSource.channel`), without a hop to the channel's event loop. An entry lives from
    // the observer's `handlerAdded` to its `handlerRemoved` (the channel closed), while the channel object is
    // alive, so its identifier is not reused meanwhile.
    private static let connections = NIOLockedValueBox<[ObjectIdentifier: ClientConnection]>([:])

    static func register(_ connection: ClientConnection, for channel: any Channel) {
        // A connection replaced (a second observer on one channel) is released outside the lock, as is a removed one.
        let replaced = connections.withLockedValue { $0.updateValue(connection, forKey: ObjectIdentifier(channel)) }
        _ = replaced
    }

    static func unregister(_ channel: any Channel) {
        let removed = connections.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(channel)) }
        _ = removed
    }

    static func connection(of channel: any Channel) -> ClientConnection? {
        connections.withLockedValue { $0[ObjectIdentifier(channel)] }
    }

    /// Connections registered now (open connections with an observer).
    static var registeredCount: Int {
        connections.withLockedValue { $0.count }
    }
}
