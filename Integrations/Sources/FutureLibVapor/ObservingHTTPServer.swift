import Logging
import NIOConcurrencyHelpers
public import NIOCore
public import Vapor

/// Vapor's HTTP server, with a ``ClientDisconnectObserver`` on each connection and a graceful shutdown that cancels
/// the requests in flight: what gives ``RequestCancellationMiddleware``'s tokens their client-gone and shutdown
/// reasons. Install it with `app.servers.use(.httpObservingClientDisconnects)`.
///
/// ```swift
/// import FutureLibVapor
/// import Vapor
///
/// func configure(_ app: Application) {
///     app.servers.use(.httpObservingClientDisconnects)
///     app.middleware.use(RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
/// }
/// ```
///
/// ### Semantics
/// - It is `app.http.server.shared`, Vapor's own `HTTPServer` with its configuration (`app.http.server.configuration`),
///   started and shut down by Vapor's `serve` command as usual: the same pipeline, the same answers, keep-alive
///   kept.
/// - Vapor 4 has no public way to add a channel handler to its connections. Once Vapor's server listens, this one
///   finds the listening channel by reflection (`Mirror`) and puts a handler first in its pipeline that adds the
///   observer first in each accepted connection's pipeline, before Vapor's handlers. If a Vapor release changes
///   what reflection finds, the server still serves, logs a warning, and the tokens do not follow the client
///   (``RequestCancellation/observesClient`` is `false`); `FutureLibVaporTests` checks it for the Vapor version
///   it builds with (and the fallback, with a finder that fails). Connections accepted before the handler is in
///   place (while `start` returns) are not observed, nor connections over a Unix domain socket (a request finds its
///   connection by its client's address, and all of that socket's clients share one unnamed address).
/// - `shutdown()` (what Vapor's `serve` command calls on `SIGTERM` and `SIGINT`, and `Application.asyncShutdown()`)
///   first cancels every request in flight, and every later one, with `GracefulShutdownError`
///   (``Vapor/Application/requestShutdown``), then lets Vapor's server close its connections once their responses
///   are written.
public struct ObservingHTTPServer: Server {
    private let application: Application
    /// Finds Vapor's listening channel: ``listeningChannel(of:)``, or in the tests one that fails as it would
    /// against a Vapor whose fields changed.
    private let findListeningChannel: @Sendable (HTTPServer) -> (any Channel)?

    /// The server of `application`: its shared `HTTPServer`, observed.
    ///
    /// ```swift
    /// app.servers.use { app in ObservingHTTPServer(application: app) }
    /// ```
    ///
    /// - Parameter application: The application whose `app.http.server.shared` serves.
    public init(application: Application) {
        self.init(application: application, findListeningChannel: Self.listeningChannel(of:))
    }

    init(application: Application, findListeningChannel: @escaping @Sendable (HTTPServer) -> (any Channel)?) {
        self.application = application
        self.findListeningChannel = findListeningChannel
    }

    private var http: HTTPServer { application.http.server.shared }

    /// Vapor's server's `onShutdown`: completes when the listening channel closes.
    ///
    /// ```swift
    /// app.server.onShutdown.whenComplete { _ in print("stopped") }
    /// ```
    public var onShutdown: EventLoopFuture<Void> { http.onShutdown }

    /// Starts Vapor's server, then observes the connections it accepts.
    ///
    /// - Parameter address: Where to listen; `nil` for the configuration's address.
    /// - Throws: Vapor's error when the server cannot start.
    @available(*, noasync, message: "Use the async start(address:) instead.")
    public func start(address: BindAddress?) throws {
        try http.start(address: address)
        try observe()?.wait()
    }

    /// Starts Vapor's server, then observes the connections it accepts.
    ///
    /// ```swift
    /// try await app.server.start(address: .hostname("127.0.0.1", port: 8080))
    /// ```
    ///
    /// - Parameter address: Where to listen; `nil` for the configuration's address.
    /// - Throws: Vapor's error when the server cannot start.
    public func start(address: BindAddress?) async throws {
        try await http.start(address: address)
        try await observe()?.get()
    }

    /// Cancels the requests in flight with `GracefulShutdownError`, then shuts Vapor's server down.
    @available(*, noasync, message: "Use the async shutdown() instead.")
    public func shutdown() {
        application.requestShutdown.cancel(reason: GracefulShutdownError())
        http.shutdown()
    }

    /// Cancels the requests in flight with `GracefulShutdownError`, then shuts Vapor's server down.
    ///
    /// ```swift
    /// await app.server.shutdown()  // the requests in flight answer 503 at once
    /// ```
    public func shutdown() async {
        application.requestShutdown.cancel(reason: GracefulShutdownError())
        await http.shutdown()
    }

    /// Puts the observer-adding handler first in the listening channel's pipeline; `nil` (after a warning) when
    /// reflection finds no listening channel.
    private func observe() -> EventLoopFuture<Void>? {
        guard let listener = findListeningChannel(http) else {
            application.logger.warning(
                "FutureLibVapor: Vapor's listening channel was not found; request tokens will not follow the client"
            )
            return nil
        }
        return listener.eventLoop.submit {
            try listener.pipeline.syncOperations.addHandler(ObserverInstaller(), position: .first)
        }
    }

    /// `HTTPServer.connection` (a lock around an optional `HTTPServerConnection`), then that connection's `channel`:
    /// the listening channel, in Vapor 4.122.
    static func listeningChannel(of server: HTTPServer) -> (any Channel)? {
        guard let box = Mirror(reflecting: server).descendant("connection") as? any LockedValueReflecting else {
            return nil
        }
        let connection = box.lockedValue
        return Mirror(reflecting: connection).descendant("some", "channel") as? any Channel
    }
}

/// Reads a `NIOLockedValueBox` whose value type is private to another module.
protocol LockedValueReflecting {
    var lockedValue: Any { get }
}

extension NIOLockedValueBox: LockedValueReflecting {
    var lockedValue: Any { withLockedValue { $0 } }
}

/// In the listening channel's pipeline: adds a ``ClientDisconnectObserver`` first in each accepted connection's
/// pipeline, before NIO's bootstrap runs Vapor's initializer on it (both on the connection's loop, in that order).
private final class ObserverInstaller: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let connection = unwrapInboundIn(data)
        if connection.eventLoop.inEventLoop {
            Self.addObserver(to: connection)
        } else {
            connection.eventLoop.execute { Self.addObserver(to: connection) }
        }
        context.fireChannelRead(data)
    }

    private static func addObserver(to connection: any Channel) {
        try? connection.pipeline.syncOperations.addHandler(ClientDisconnectObserver(), position: .first)
    }
}

// Confined to the listening channel's loop.
@available(*, unavailable)
extension ObserverInstaller: Sendable {}

extension Application.Servers.Provider {
    /// Vapor's HTTP server with client-disconnect observation and a request-cancelling graceful shutdown:
    /// ``ObservingHTTPServer``.
    ///
    /// ```swift
    /// app.servers.use(.httpObservingClientDisconnects)
    /// ```
    public static var httpObservingClientDisconnects: Self {
        .init { app in
            app.servers.use { app in ObservingHTTPServer(application: app) }
        }
    }
}
