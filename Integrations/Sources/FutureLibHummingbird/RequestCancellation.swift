public import Hummingbird

/// A request's cancellation: its token, which the request context makes on a connection with a
/// ``ClientDisconnectObserver`` and ``RequestCancellationMiddleware`` otherwise, and the connection it watches.
///
/// A request context that carries one conforms to ``CancellableRequestContext``:
///
/// ```swift
/// struct AppRequestContext: CancellableRequestContext {
///     var coreContext: CoreRequestContextStorage
///     var cancellation: RequestCancellation
///
///     init(source: ApplicationRequestContextSource) {
///         coreContext = .init(source: source)
///         cancellation = RequestCancellation(source: source)
///     }
/// }
/// ```
public struct RequestCancellation: Sendable {
    let connection: ClientConnection?
    /// The request behind ``token`` (`package`: the soak checks that each is released once its response is sent).
    package var request: CancellationRequest?
    /// Whether a ``RequestCancellationMiddleware`` has taken the request over (read the caller's deadline, armed the
    /// deadline): a later one only sets its deadline.
    var isStarted = false
    /// The caller's deadline on the system clock, read from the request's deadline header by
    /// ``RequestCancellationMiddleware``: its instant alone, which copies as plain bytes (the context holding it is
    /// copied several times per request), not a `CancellationDeadline` and its clock.
    var callerInstant: Duration?

    /// The cancellation of a request that arrived on `source`'s connection. If the server has a
    /// ``ClientDisconnectObserver`` (``HummingbirdCore/HTTPServerBuilder/http1ObservingClientDisconnects(configuration:)``),
    /// the request gets its token here, with no middleware (a `CancellationRequest` for every request, whether a
    /// route reads it or not): it is cancelled when the connection ends (`ClientDisconnectedError`) or the server
    /// shuts down gracefully (`GracefulShutdownError`), until the next request on the connection starts, so also
    /// when the connection ends after the answer, whichever side closes it. ``RequestCancellationMiddleware`` adds
    /// deadlines and lets go of it when the route returns. Without the observer the token is `.none` until the
    /// middleware makes one.
    ///
    /// ```swift
    /// let cancellation = RequestCancellation(source: source)
    /// ```
    ///
    /// - Parameter source: What Hummingbird makes the request context from.
    public init(source: ApplicationRequestContextSource) {
        connection = ClientConnection.connection(of: source.channel)
        if let connection {
            // Hummingbird makes a connection's request contexts one after another, each once the previous request
            // was answered: watching this request stops the watch of the previous one.
            let stop = CancellationRequest()
            connection.watch(stop)
            request = stop
        }
    }

    /// The cancellation of a request that has no connection to watch (a test's, or another context source's): its
    /// token follows only the deadline and the shutdown.
    ///
    /// ```swift
    /// let cancellation = RequestCancellation()
    /// ```
    public init() {
        connection = nil
    }

    /// The request's token, cancelled when its client goes away (reason `ClientDisconnectedError`), its deadline
    /// passes (`DeadlineExceededError`) or the application shuts down gracefully (`GracefulShutdownError`),
    /// whichever comes first. Without ``RequestCancellationMiddleware`` it has no deadline but the route's own
    /// (``setDeadline(_:)``), and it is `.none` on a connection without a ``ClientDisconnectObserver``.
    ///
    /// ```swift
    /// let page = client.execute(request, timeout: .seconds(30), upTo: 1 << 20,
    ///                           cancellationToken: context.cancellation.token)
    /// ```
    public var token: CancellationToken {
        request?.token ?? .none
    }

    /// Whether the request's connection has a ``ClientDisconnectObserver``, so that the token follows the client.
    ///
    /// ```swift
    /// assert(context.cancellation.observesClient, "install .http1ObservingClientDisconnects()")
    /// ```
    public var observesClient: Bool {
        connection != nil
    }

    /// The deadline the caller sent in the request's deadline header (`Connect-Timeout-Ms` by default), on the
    /// system clock, from when ``RequestCancellationMiddleware`` read it; nil when it sent none (or none valid).
    ///
    /// ```swift
    /// router.get("slow") { _, context in
    ///     if let caller = context.cancellation.callerDeadline {
    ///         print("the caller waits \(caller.remaining) more")
    ///     }
    ///     return "ok"
    /// }
    /// ```
    ///
    /// The request's token fires at the earlier of this and the route's deadline; read what is left of both with
    /// `context.cancellation.token.timeRemaining`.
    public var callerDeadline: CancellationDeadline? {
        callerInstant.map { CancellationDeadline(instant: $0, clock: .system) }
    }

    /// Sets the request's deadline to `delay` from now, replacing an earlier one (the last call wins), but never
    /// later than the caller's (``callerDeadline``): the token is then cancelled with `DeadlineExceededError` when
    /// it passes. Does nothing where the token is `.none` (outside ``RequestCancellationMiddleware``, on a connection
    /// without a ``ClientDisconnectObserver``) or once it is cancelled.
    ///
    /// ```swift
    /// router.get("export") { _, context in
    ///     context.cancellation.setDeadline(.seconds(30))  // longer than the application's default
    ///     return try await export(cancellationToken: context.cancellation.token)
    /// }
    /// ```
    ///
    /// - Parameter delay: How long from now.
    public func setDeadline(_ delay: Duration) {
        request?.cancel(after: delay, notAfter: callerDeadline)
    }
}

/// A request context that carries a ``RequestCancellation``: made in its `init(source:)`, taken over by
/// ``RequestCancellationMiddleware``.
///
/// ```swift
/// struct ShopRequestContext: CancellableRequestContext {
///     var coreContext: CoreRequestContextStorage
///     var cancellation: RequestCancellation
///     var customer: String?
///
///     init(source: ApplicationRequestContextSource) {
///         coreContext = .init(source: source)
///         cancellation = RequestCancellation(source: source)
///     }
/// }
/// let router = Router(context: ShopRequestContext.self)
/// ```
public protocol CancellableRequestContext: RequestContext {
    /// The request's cancellation; make it with ``RequestCancellation/init(source:)`` in `init(source:)`.
    var cancellation: RequestCancellation { get set }
}

/// The request context of an application that needs nothing but ``RequestCancellation`` beside Hummingbird's own.
///
/// ```swift
/// let router = Router(context: BasicCancellableRequestContext.self)
/// router.add(middleware: RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
/// ```
public struct BasicCancellableRequestContext: CancellableRequestContext {
    /// Hummingbird's part of the context.
    public var coreContext: CoreRequestContextStorage
    /// The request's cancellation.
    public var cancellation: RequestCancellation

    /// Creates the context of a request that arrived on `source`'s connection.
    ///
    /// ```swift
    /// let context = BasicCancellableRequestContext(source: source)
    /// ```
    ///
    /// - Parameter source: What Hummingbird makes the request context from.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        cancellation = RequestCancellation(source: source)
    }
}
