public import FutureLibHTTPDeadline
import HTTPTypes
public import Hummingbird
import ServiceLifecycle

/// Gives every request a token (`context.cancellation.token`) that is cancelled when the client goes away, when the
/// request's deadline passes, or when the application shuts down gracefully, each with its reason; and, opted in,
/// answers a handler that failed because of it with `499`, `504` or `503`.
///
/// ```swift
/// let router = Router(context: BasicCancellableRequestContext.self)
/// router.add(middleware: RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
/// router.get("users/:id") { _, context in
///     let id = try context.parameters.require("id")
///     let response = try await client.execute(
///         HTTPClientRequest(url: "http://users.internal/users/\(id)"),
///         timeout: .seconds(30),
///         upTo: 1 << 20,
///         cancellationToken: context.cancellation.token
///     ).value()
///     return Response(status: .ok, body: .init(byteBuffer: try await response.body.collect(upTo: 1 << 20)))
/// }
/// let app = Application(router: router, server: .http1ObservingClientDisconnects())
/// ```
///
/// ### Semantics
/// - **Client gone** (reason `ClientDisconnectedError`): the client's connection closed, or the client closed its
///   side of it, while the handler ran. Needs a ``ClientDisconnectObserver`` on the connection
///   (`.http1ObservingClientDisconnects()`); without it the token does not follow the client.
/// - **Deadline** (reason `DeadlineExceededError`): `deadline` after the middleware starts the request; a route
///   can set its own with ``RequestDeadlineMiddleware`` or ``RequestCancellation/setDeadline(_:)`` (the last one
///   set wins).
/// - **The caller's deadline** (reason `DeadlineExceededError`): what the caller says it has left, in
///   `deadlineHeader` (`Connect-Timeout-Ms` by default, which FutureLib's AsyncHTTPClient adapter sends), from when
///   the middleware reads it. The token fires at the earlier of that and the route's deadline, and no later
///   deadline set by a route extends it: a chain of services shares one shrinking budget. Hostile values have the
///   outcomes ``FutureLibHTTPDeadline/DeadlineHeader`` gives them (a repeated header: the smallest valid value;
///   `0` or negative: already passed, the token fires at once; huge: clamped; garbage: ignored).
/// - **Graceful shutdown** (reason `GracefulShutdownError`): the `ServiceGroup` running the application triggers
///   graceful shutdown (the `Application` is the service; its connections run inside it), or `shutdown` is
///   cancelled (its own reason then). On a connection with a ``ClientDisconnectObserver`` it arrives as the
///   server quiesces the connection; without one, through a graceful-shutdown handler the request registers.
/// - The token covers the handler until it returns its `Response`: the client's connection is watched (or the
///   graceful-shutdown handler registered) only meanwhile. A response body written after that (a streamed body) is
///   not covered.
/// - On a connection with a ``ClientDisconnectObserver`` the request context made the token already
///   (``RequestCancellation/init(source:)``, which follows the client and the shutdown without any middleware): the
///   middleware takes that one over, adding the deadlines (and `shutdown`, while the handler runs), and lets go of
///   it when the handler returns.
/// - A request without a deadline (none here, none from a route, none in its header) arms no timer, and with the
///   observer and no `shutdown` token it registers nothing outside its connection: its cost is one
///   `CancellationRequest`.
/// - Hummingbird does not cancel the handler's task (that task serves the connection's next requests too): hand
///   the token to the work (a `Future`, `HTTPClient.execute(…cancellationToken:)`), or check it.
/// - With `respondsToCancellation`, a handler that throws once the token is cancelled is answered with the status
///   of the reason (``HTTPResponse/Status/init(cancellationReason:)``): `499` for a client gone, `504` for the
///   deadline, `503` for the shutdown; other errors, and other reasons, are rethrown.
/// - Added twice (an application-wide one and a route group's), the inner one only sets its deadline.
public struct RequestCancellationMiddleware<Context: CancellableRequestContext>: RouterMiddleware {
    /// The deadline of each request, from when the middleware starts it; `nil` for none.
    public let deadline: Duration?
    /// A token that also cancels every request (as well as the application's graceful shutdown).
    public let shutdown: CancellationToken
    /// Whether a handler that throws once its token is cancelled is answered with `499`, `504` or `503`.
    public let respondsToCancellation: Bool
    /// The header the caller's remaining deadline is read from; nil to ignore callers' deadlines.
    public let deadlineHeader: DeadlineHeader?
    /// ``deadlineHeader``'s field name, made once rather than for every request.
    private let deadlineField: HTTPField.Name?

    /// Creates the middleware.
    ///
    /// ```swift
    /// router.add(middleware: RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
    /// ```
    ///
    /// - Parameters:
    ///   - deadline: The deadline of each request; `nil` (the default) for none.
    ///   - shutdown: A token that also cancels every request, for an application not run by a `ServiceGroup`;
    ///     `.none` by default.
    ///   - respondsToCancellation: Answer a handler that throws once its token is cancelled with the status of the
    ///     reason; `false` by default (the error reaches Hummingbird's error handling).
    ///   - deadlineHeader: The header that carries the caller's remaining deadline, `Connect-Timeout-Ms` by default;
    ///     `nil` ignores it. Only the outermost middleware reads it.
    public init(
        deadline: Duration? = nil,
        shutdown: CancellationToken = .none,
        respondsToCancellation: Bool = false,
        deadlineHeader: DeadlineHeader? = .connectTimeout
    ) {
        self.deadline = deadline
        self.shutdown = shutdown
        self.respondsToCancellation = respondsToCancellation
        self.deadlineHeader = deadlineHeader
        self.deadlineField = deadlineHeader.flatMap { HTTPField.Name($0.name) }
    }

    // `@concurrent`, as Hummingbird's protocol (built without nonisolated(nonsending) by default) declares it.
    /// Runs `next` with the request's token in `context.cancellation`.
    @concurrent public func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        // `Context` is generic here (Hummingbird calls the middleware through an existential, so this code is not
        // specialized): its `cancellation` is read once and written once, each a call through the protocol.
        var cancellation = context.cancellation
        if cancellation.isStarted, let stop = cancellation.request {
            if let deadline { stop.cancel(after: deadline, notAfter: cancellation.callerDeadline) }
            return try await next(request, context)
        }
        // The request the context made and watches on an observed connection (there is one whenever there is a
        // connection: `RequestCancellation(source:)`); otherwise a new one, linked to `shutdown` when that can fire.
        let made = cancellation.request
        let stop = made ?? (shutdown.canBeCancelled ? CancellationRequest(linkedTo: [shutdown]) : CancellationRequest())
        // The context's request was made without `shutdown`: it follows it while the handler runs.
        var followsShutdown: CancellationRegistration?
        if made != nil, shutdown.canBeCancelled {
            followsShutdown = shutdown.onCancel { [shutdown] in
                stop.cancel(reason: shutdown.cancellationReason ?? CancellationError())
            }
        }
        defer { followsShutdown?.unregister() }
        cancellation.request = stop
        cancellation.isStarted = true
        cancellation.callerInstant = callerInstant(of: request)
        stop.cancel(after: deadline, notAfter: cancellation.callerDeadline)
        var context = context
        context.cancellation = cancellation
        if let connection = cancellation.connection {
            // The observer cancels `stop` (the context's, which it watches) when the client goes away or the server
            // quiesces the connection: no graceful-shutdown handler (a lock shared by every connection, twice, and a
            // closure) for each request.
            defer { connection.unwatch(stop) }
            do {
                return try await next(request, context)
            } catch {
                return try answer(error, stoppedBy: stop)
            }
        }
        return try await withGracefulShutdownHandler {
            do {
                return try await next(request, context)
            } catch {
                return try answer(error, stoppedBy: stop)
            }
        } onGracefulShutdown: {
            stop.cancel(reason: GracefulShutdownError())
        }
    }
}

extension RequestCancellationMiddleware {
    /// The instant on the system clock of the deadline the caller sent in ``deadlineHeader``, from now, if any valid
    /// one.
    private func callerInstant(of request: Request) -> Duration? {
        guard let deadlineHeader, let deadlineField, request.headers.contains(deadlineField) else { return nil }
        return deadlineHeader.callerDeadline(in: request.headers[values: deadlineField], clock: .system)?.instant
    }

    /// What answers a handler that threw `error`: with ``respondsToCancellation``, once `stop` is cancelled, the
    /// status of its reason; otherwise `error` again.
    private func answer(_ error: any Error, stoppedBy stop: CancellationRequest) throws -> Response {
        guard respondsToCancellation, let reason = stop.token.cancellationReason,
            let status = HTTPResponse.Status(cancellationReason: reason)
        else { throw error }
        return Response(status: status)
    }
}

/// Sets the deadline of the requests of a route group: their token (`context.cancellation.token`) is cancelled with
/// `DeadlineExceededError` when it passes, replacing the application's default deadline (the last one set wins), but
/// never later than the caller's (``RequestCancellation/callerDeadline``).
///
/// ```swift
/// router.add(middleware: RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
/// router.group("reports")
///     .add(middleware: RequestDeadlineMiddleware(.seconds(60)))
///     .get(":id") { _, context in
///         try await report(cancellationToken: context.cancellation.token)
///     }
/// ```
///
/// Without a ``RequestCancellationMiddleware`` before it, it is one with this deadline (and no responses).
public struct RequestDeadlineMiddleware<Context: CancellableRequestContext>: RouterMiddleware {
    /// The deadline, from when this middleware runs.
    public let deadline: Duration
    /// What runs each request: a ``RequestCancellationMiddleware`` with ``deadline``, made once.
    private let middleware: RequestCancellationMiddleware<Context>

    /// Creates the middleware.
    ///
    /// ```swift
    /// let slow = RequestDeadlineMiddleware<BasicCancellableRequestContext>(.seconds(60))
    /// ```
    ///
    /// - Parameter deadline: The deadline of each request of the group, from when the middleware runs.
    public init(_ deadline: Duration) {
        self.deadline = deadline
        self.middleware = RequestCancellationMiddleware(deadline: deadline)
    }

    // `@concurrent`, as Hummingbird's protocol (built without nonisolated(nonsending) by default) declares it.
    /// Sets the deadline, then runs `next`.
    @concurrent public func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        try await middleware.handle(request, context: context, next: next)
    }
}
