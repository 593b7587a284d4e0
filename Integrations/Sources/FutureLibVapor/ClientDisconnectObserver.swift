import NIOConcurrencyHelpers
import NIOCore

/// A channel handler at the head of a Vapor connection's pipeline that tells the requests in flight on it that the
/// client went away: the connection closed, or the client closed its side of it (read end-of-file).
///
/// Vapor does not cancel a route's task when its client disconnects, and its pipeline only ends a streamed request
/// body then. This handler sees the end of the connection as soon as NIO reads it and cancels the tokens that
/// ``RequestCancellationMiddleware`` made for the requests in flight, with the reason `ClientDisconnectedError`.
/// It does nothing else: it passes every read and event on, and writes and closes nothing, so keep-alive
/// connections and Vapor's answers stay as they are. ``ObservingHTTPServer`` adds one to each connection.
final class ClientDisconnectObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let connection = ClientConnection()
    private var key: ClientConnection.Key?

    func handlerAdded(context: ChannelHandlerContext) {
        register(context: context)
    }

    func channelActive(context: ChannelHandlerContext) {
        register(context: context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        clientWentAway()
    }

    func channelInactive(context: ChannelHandlerContext) {
        clientWentAway()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        ReadingObserver.delivering(self) { context.fireChannelRead(data) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            connection.clientWentAway()
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Registers the connection under its client's address, once (an accepted connection knows it when the handler
    /// is added). Only an IP address (one with a port) names one connection: every client of a Unix domain socket
    /// has the same unnamed address, so such a connection is not registered, and its requests are not observed
    /// rather than watching another client's connection.
    private func register(context: ChannelHandlerContext) {
        guard key == nil, !connection.isGone, let remote = context.channel.remoteAddress, remote.port != nil else {
            return
        }
        let key = ClientConnection.Key(remote: remote, loop: ObjectIdentifier(context.eventLoop))
        self.key = key
        ClientConnection.register(connection, for: key)
    }

    /// The connection, if it is registered under `key`: what `ClientConnection.connection(remote:loop:)` would find
    /// in its table for a request that arrives in this observer's read.
    func connection(registeredAs key: ClientConnection.Key) -> ClientConnection? {
        self.key == key ? connection : nil
    }

    private func clientWentAway() {
        if let key {
            self.key = nil
            ClientConnection.unregister(connection, for: key)
        }
        connection.clientWentAway()
    }
}

// Confined to its channel's loop.
@available(*, unavailable)
extension ClientDisconnectObserver: Sendable {}

/// What the requests of one connection and its ``ClientDisconnectObserver`` share: whether the client went away or
/// the application shut down, and the requests in flight (one at a time with Vapor's default HTTP/1.1 pipelining
/// support, which answers pipelined requests in order; several without it).
///
/// The connection, not each request, follows the application's shutdown (``Vapor/Application/requestShutdown``):
/// its first request registers one handler on that token, which the connection's end removes. A request then
/// costs no registration on a token every request shares.
final class ClientConnection: Sendable {
    private struct State {
        var isGone = false
        /// The shutdown token's reason, once it fired: every later request is cancelled with it at once.
        var shutdownReason: (any Error)?
        /// Whether the connection registered its handler on the shutdown token (it does once).
        var followsShutdown = false
        var shutdownRegistration: CancellationRegistration?
        var inFlight: [CancellationRequest] = []
    }

    // NIO's lock, which ThreadSanitizer sees (the standard library's `Mutex` it does not, on Linux).
    private let state = NIOLockedValueBox(State())

    /// Whether the client went away.
    var isGone: Bool { state.withLockedValue { $0.isGone } }

    /// Cancels `request` when the client goes away (`ClientDisconnectedError`) or `shutdown` is cancelled (its
    /// reason) while it is in flight, or at once if either already happened. `shutdown` is read once per
    /// connection.
    func watch(_ request: CancellationRequest, shutdown: () -> CancellationToken) {
        enum Outcome {
            case watching
            case follow
            case cancel(any Error)
        }
        let outcome: Outcome = state.withLockedValue { state in
            if state.isGone { return .cancel(ClientDisconnectedError()) }
            if let reason = state.shutdownReason { return .cancel(reason) }
            state.inFlight.append(request)
            guard !state.followsShutdown else { return .watching }
            state.followsShutdown = true
            return .follow
        }
        switch outcome {
        case .watching: return
        case .follow: follow(shutdown())
        case .cancel(let reason): request.cancel(reason: reason)
        }
    }

    /// Stops watching `request` (its response is ready).
    func unwatch(_ request: CancellationRequest) {
        // The request leaves the lock before it is released (the caller still holds it anyway).
        let removed: CancellationRequest? = state.withLockedValue { state in
            guard let index = state.inFlight.firstIndex(where: { $0 === request }) else { return nil }
            return state.inFlight.remove(at: index)
        }
        _ = removed
    }

    /// The client went away: cancels the requests in flight, outside the lock, and every later one at once; removes
    /// the handler on the shutdown token.
    func clientWentAway() {
        // As in `shutDown(reason:)`: what the lock held is released outside it.
        let (inFlight, registration) = state.withLockedValue { state in
            state.isGone = true
            defer {
                state.inFlight = []
                state.shutdownRegistration = nil
            }
            return (state.inFlight, state.shutdownRegistration)
        }
        _ = registration?.unregister()
        for request in inFlight { request.cancel(reason: ClientDisconnectedError()) }
    }

    /// Registers the connection's one handler on `shutdown` (at once, if it is cancelled already).
    private func follow(_ shutdown: CancellationToken) {
        // The handler holds the state, not the connection: a weak reference would give the connection a side table,
        // which makes each of a request's retains and releases of it take the runtime's slow path
        // (`make bench-http-instructions`). The connection's end removes the handler, and with it the reference.
        let registration = shutdown.onCancel { [state] in
            Self.shutDown(state, reason: shutdown.cancellationReason ?? CancellationError())
        }
        let isGone = state.withLockedValue { state in
            if !state.isGone { state.shutdownRegistration = registration }
            return state.isGone
        }
        if isGone { _ = registration.unregister() }
    }

    /// The shutdown token fired: cancels the requests in flight, outside the lock, and every later one at once, with
    /// its reason.
    private static func shutDown(_ state: NIOLockedValueBox<State>, reason: any Error) {
        // The registration and the requests leave the lock before they are released: dropping the last reference
        // to either can release a handler (user code).
        let (inFlight, registration) = state.withLockedValue { state in
            if state.shutdownReason == nil { state.shutdownReason = reason }
            defer {
                state.inFlight = []
                state.shutdownRegistration = nil
            }
            return (state.inFlight, state.shutdownRegistration)
        }
        _ = registration
        for request in inFlight { request.cancel(reason: reason) }
    }

    // MARK: - The connections by address

    /// A connection as a Vapor request knows it: its client's address and its event loop (`Request.remoteAddress`,
    /// `Request.eventLoop`); Vapor's requests carry no reference to their channel. Two open TCP connections to one
    /// server never share a client address (two Unix domain socket connections do: they are not registered).
    struct Key: Hashable, Sendable {
        let remote: SocketAddress
        let loop: ObjectIdentifier
    }

    // An entry lives from the observer's `handlerAdded` to the connection's end; a later connection from the same
    // address and port replaces it, and the earlier one's end then leaves the later one's entry alone.
    private static let connections = NIOLockedValueBox<[Key: ClientConnection]>([:])

    static func register(_ connection: ClientConnection, for key: Key) {
        let replaced = connections.withLockedValue { $0.updateValue(connection, forKey: key) }
        _ = replaced
    }

    static func unregister(_ connection: ClientConnection, for key: Key) {
        let removed: ClientConnection? = connections.withLockedValue { connections in
            guard connections[key] === connection else { return nil }
            return connections.removeValue(forKey: key)
        }
        _ = removed
    }

    static func connection(remote: SocketAddress?, loop: any EventLoop) -> ClientConnection? {
        guard let remote else { return nil }
        let key = Key(remote: remote, loop: ObjectIdentifier(loop))
        // Most requests arrive in their connection's read, on this thread: its observer answers without the table's
        // lock and hash. Another connection's read (a pipelined request delivered later) has another key.
        if let reading = ReadingObserver.current, let connection = reading.connection(registeredAs: key) {
            return connection
        }
        return connections.withLockedValue { $0[key] }
    }

    /// Connections registered now (open connections with an observer).
    static var registeredCount: Int {
        connections.withLockedValue { $0.count }
    }
}
