import NIOConcurrencyHelpers
import NIOCore
import Vapor

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
    /// The state of an earlier request of this connection that nothing holds any more, kept for the next request
    /// that starts within this observer's read (``spareState()``, ``keepSpare(from:)``).
    private var spare: RequestState?

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

    /// The connection, if it is registered under the client address `remote` and the event loop `loop`: what
    /// `ClientConnection.connection(remote:loop:)` would find in its table for a request that arrives in this
    /// observer's read (compared in place: a key would copy the address).
    func connection(remote: SocketAddress, loop: ObjectIdentifier) -> ClientConnection? {
        guard let key, key.loop == loop, key.remote == remote else { return nil }
        return connection
    }

    /// A state to reuse for a request that starts within this observer's read, if an earlier request left one.
    func spareState() -> RequestState? {
        defer { spare = nil }
        return spare
    }

    /// Keeps the state of a request that left the connection's list, if it can serve the next request as a new one.
    func keepSpare(from removed: inout ClientConnection.Removed) {
        guard spare == nil else { return }
        spare = removed.takeReusableState()
    }

    /// Takes back a spare that ``spareState()`` gave to a request that did not need it (a middleware after the
    /// first, which found the request started).
    func returnSpare(_ state: RequestState) {
        if spare == nil { spare = state }
    }

    /// What ``RequestCancellationMiddleware`` keeps of `request`, if this observer's connection watches it.
    func watchedState(of request: Request) -> RequestState? {
        connection.state(of: request)
    }

    private func clientWentAway() {
        // The connection hands the requests still held to the orphans before it leaves the table: a route that
        // reads its cancellation meanwhile finds it in one or the other.
        connection.clientWentAway()
        if let key {
            self.key = nil
            ClientConnection.unregister(connection, for: key)
        }
    }
}

// Confined to its channel's loop.
@available(*, unavailable)
extension ClientDisconnectObserver: Sendable {}

/// What the requests of one connection and its ``ClientDisconnectObserver`` share: whether the client went away or
/// the application shut down, and the requests ``RequestCancellationMiddleware`` started on it (one at a time with
/// Vapor's default HTTP/1.1 pipelining support, which answers pipelined requests in order; several without it).
///
/// The connection, not each request, follows the application's shutdown (``Vapor/Application/requestShutdown``):
/// its first request registers one handler on that token, which the connection's end removes. A request then
/// costs no registration on a token every request shares.
///
/// The connection is also where a request's cancellation is found (`request.cancellation`), by the request's
/// identity, rather than in Vapor's `Request.storage`, whose write and read cost more than the rest of the token
/// (`make bench-http-instructions`). A request stays listed after its response is ready, so that the route and the
/// middlewares in front of this one still read its reason, until the next request on the connection starts or the
/// connection ends. Then, if anything else still holds the request (its route, still running when the client left;
/// a task the route left running), ``OrphanedRequests`` keeps its state before the connection lets it go: a later
/// read finds it there.
final class ClientConnection: Sendable {
    /// A request the middleware started on this connection, and its state.
    struct Watched {
        var request: Request
        var state: RequestState

        /// Its response is ready: the client's leaving no longer cancels it.
        var isFinished: Bool { state.isFinished }
    }

    private struct State {
        var isGone = false
        /// The shutdown token's reason, once it fired: every later request is cancelled with it at once.
        var shutdownReason: (any Error)?
        /// Whether the connection registered its handler on the shutdown token (it does once).
        var followsShutdown = false
        var shutdownRegistration: CancellationRegistration?
        var requests: [Watched] = []

        /// Removes the requests that `leaves` selects; a request that something else still holds is first adopted
        /// by ``OrphanedRequests``. Called with the connection's lock held, so that a reader finds the state here or
        /// there; the orphans' lock is taken inside it, and nothing takes the two in the other order. The caller
        /// releases what this returns outside the lock (the last reference to a request releases what its storage
        /// holds, and a state the handlers on its token).
        mutating func remove(where leaves: (Watched) -> Bool) -> Removed {
            var removed = Removed()
            var index = requests.startIndex
            while index < requests.endIndex {
                guard leaves(requests[index]) else {
                    index += 1
                    continue
                }
                var leaving = requests.remove(at: index)
                if !isKnownUniquelyReferenced(&leaving.request) {
                    removed.release(OrphanedRequests.adopt(leaving.request, state: leaving.state))
                }
                removed.append(leaving)
            }
            return removed
        }
    }

    /// The requests `State.remove(where:)` took out, for their release outside the lock: most often one (the
    /// request before on a keep-alive connection), which takes no array.
    struct Removed {
        private var first: Watched?
        private var others: [Watched] = []
        /// What the orphans' adoptions let go of.
        private var dropped: [OrphanedRequests.Dropped] = []

        mutating func append(_ watched: Watched) {
            if first == nil { first = watched } else { others.append(watched) }
        }

        mutating func release(_ dropped: OrphanedRequests.Dropped) {
            self.dropped.append(dropped)
        }

        /// The state of the first request removed, if nothing else holds it, its request is reusable
        /// (`CancellationRequest.isReusable`) and it had no caller's deadline. The entry stays, for its request's
        /// release outside the lock: it still names the state, so read nothing of it after this (not `inFlight`).
        mutating func takeReusableState() -> RequestState? {
            guard var watched = first else { return nil }
            first = nil
            defer { first = watched }
            guard isKnownUniquelyReferenced(&watched.state), watched.state.isReusable else { return nil }
            return watched.state
        }

        /// The requests whose responses were not ready.
        var inFlight: [CancellationRequest] {
            ((first.map { [$0] } ?? []) + others).filter { !$0.isFinished }.map(\.state.request)
        }
    }

    /// How a request's watch began.
    enum Watch {
        /// The connection watches it.
        case watching
        /// The connection does not: the client went away or the application shut down, for this reason.
        case refused(any Error)
        /// The connection watches it already, with this state (a middleware before this one started it).
        case started(RequestState)
    }

    // NIO's lock, which ThreadSanitizer sees (the standard library's `Mutex` it does not, on Linux).
    private let state = NIOLockedValueBox(State())

    /// Whether the client went away.
    var isGone: Bool { state.withLockedValue { $0.isGone } }

    /// Watches `request`, whose state is `requestState`: its cancellation is cancelled when the client goes away
    /// (`ClientDisconnectedError`) or `shutdown` is cancelled (its reason) while it is in flight. `shutdown` is read
    /// once per connection. The requests whose responses were ready leave the connection now.
    func watch(
        _ request: Request,
        as requestState: RequestState,
        shutdown: () -> CancellationToken,
        sparesTo reading: ClientDisconnectObserver?
    ) -> Watch {
        enum Outcome {
            case watch(Watch)
            case follow
        }
        var (outcome, finished): (Outcome, Removed) = state.withLockedValue { state in
            if let started = state.requests.first(where: { $0.request === request }) {
                return (.watch(.started(started.state)), Removed())
            }
            if state.isGone { return (.watch(.refused(ClientDisconnectedError())), Removed()) }
            if let reason = state.shutdownReason { return (.watch(.refused(reason)), Removed()) }
            let finished = state.remove(where: \.isFinished)
            state.requests.append(Watched(request: request, state: requestState))
            guard !state.followsShutdown else { return (.watch(.watching), finished) }
            state.followsShutdown = true
            return (.follow, finished)
        }
        reading?.keepSpare(from: &finished)
        switch outcome {
        case .watch(let watch):
            return watch
        case .follow:
            follow(shutdown())
            return .watching
        }
    }

    /// The state of `request`, if the connection lists it.
    func state(of request: Request) -> RequestState? {
        state.withLockedValue { state in
            state.requests.first(where: { $0.request === request })?.state
        }
    }

    /// The client went away: cancels the requests in flight, outside the lock, and every later one at once; lets
    /// the requests go; removes the handler on the shutdown token.
    func clientWentAway() {
        // As in `shutDown(reason:)`: what the lock held is released outside it.
        let (requests, registration) = state.withLockedValue { state in
            state.isGone = true
            defer { state.shutdownRegistration = nil }
            return (state.remove(where: { _ in true }), state.shutdownRegistration)
        }
        _ = registration?.unregister()
        for request in requests.inFlight { request.cancel(reason: ClientDisconnectedError()) }
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
    /// its reason. The requests stay listed until the connection ends.
    private static func shutDown(_ state: NIOLockedValueBox<State>, reason: any Error) {
        // The registration leaves the lock before it is released: dropping the last reference to it can release a
        // handler (user code).
        let (inFlight, registration) = state.withLockedValue { state in
            if state.shutdownReason == nil { state.shutdownReason = reason }
            defer { state.shutdownRegistration = nil }
            let inFlight = state.requests.lazy.filter { !$0.isFinished }.map(\.state.request)
            return (Array(inFlight), state.shutdownRegistration)
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

    // A connection is listed from the observer's `handlerAdded` to its end. Two open connections share a key only in
    // a race (a client that reconnects from the same port, accepted before the earlier connection's end is read) or
    // with two servers of one process on one event loop: both are kept, a request's middleware takes the newest, and
    // a look-up for a request's state searches all of them.
    private static let connections = NIOLockedValueBox<[Key: [ClientConnection]]>([:])

    static func register(_ connection: ClientConnection, for key: Key) {
        connections.withLockedValue { $0[key, default: []].append(connection) }
    }

    static func unregister(_ connection: ClientConnection, for key: Key) {
        let removed: ClientConnection? = connections.withLockedValue { connections in
            guard var listed = connections[key], let index = listed.firstIndex(where: { $0 === connection }) else {
                return nil
            }
            let removed = listed.remove(at: index)
            connections[key] = listed.isEmpty ? nil : listed
            return removed
        }
        _ = removed
    }

    /// What ``RequestCancellationMiddleware`` keeps of `request`, if an observed connection lists it: the connection
    /// whose read the thread is in first (a route that answers within the read, and every middleware), then those
    /// registered under the request's address (an `async` route's task).
    static func watchedState(of request: Request) -> RequestState? {
        if let reading = ReadingObserver.current, let state = reading.watchedState(of: request) {
            return state
        }
        guard let remote = request.remoteAddress else { return nil }
        let key = Key(remote: remote, loop: ObjectIdentifier(request.eventLoop))
        // Each connection's lock is taken after the table's is released: the two never nest.
        guard let listed = connections.withLockedValue({ $0[key] }) else { return nil }
        for connection in listed.reversed() {
            if let state = connection.state(of: request) { return state }
        }
        return nil
    }

    /// The connection a request arrived on, found by its client address and event loop, and that connection's
    /// observer if the current thread is in its read (where Vapor runs most middleware chains).
    static func lookUp(
        remote: SocketAddress?,
        loop: any EventLoop
    ) -> (connection: ClientConnection, reading: ClientDisconnectObserver?)? {
        guard let remote else { return nil }
        // Most requests arrive in their connection's read, on this thread: its observer answers without the table's
        // lock and hash. Another connection's read (a pipelined request delivered later) has another key.
        if let reading = ReadingObserver.current,
            let connection = reading.connection(remote: remote, loop: ObjectIdentifier(loop))
        {
            return (connection, reading)
        }
        let key = Key(remote: remote, loop: ObjectIdentifier(loop))
        guard let connection = connections.withLockedValue({ $0[key]?.last }) else { return nil }
        return (connection, nil)
    }

    /// The connection a request arrived on, found by its client address and event loop.
    static func connection(remote: SocketAddress?, loop: any EventLoop) -> ClientConnection? {
        lookUp(remote: remote, loop: loop)?.connection
    }

    /// Connections registered now (open connections with an observer).
    static var registeredCount: Int {
        connections.withLockedValue { $0.values.reduce(0) { $0 + $1.count } }
    }
}
