public import NIOCore
public import Vapor

/// Gives every request a token (`request.cancellation.token`) that is cancelled when the client goes away, when the
/// request's deadline passes, or when the application shuts down gracefully, each with its reason; and, opted in,
/// answers a route that failed because of it with `499`, `504` or `503`.
///
/// ```swift
/// app.servers.use(.httpObservingClientDisconnects)
/// app.middleware.use(RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
/// app.get("users", ":id") { request async throws -> String in
///     let id = try request.parameters.require("id")
///     let response = try await client.execute(
///         HTTPClientRequest(url: "http://users.internal/users/\(id)"),
///         timeout: .seconds(30),
///         upTo: 1 << 20,
///         cancellationToken: request.cancellation.token
///     ).value()
///     return String(buffer: try await response.body.collect(upTo: 1 << 20))
/// }
/// ```
///
/// ### Semantics
/// - **Client gone** (reason `ClientDisconnectedError`): the client's connection closed, or the client closed its
///   side of it, while the route ran. Needs the observing server (`app.servers.use(.httpObservingClientDisconnects)`,
///   ``ObservingHTTPServer``); without it the token does not follow the client.
/// - **Deadline** (reason `DeadlineExceededError`): `deadline` after the middleware starts the request; a route
///   group can set its own with ``RequestDeadlineMiddleware``, a route with ``RequestCancellation/setDeadline(_:)``
///   (the last one set wins).
/// - **The caller's deadline** (reason `DeadlineExceededError`): what the caller says it has left, in
///   `deadlineHeader` (`Connect-Timeout-Ms` by default, which FutureLib's AsyncHTTPClient adapter sends), from when
///   the middleware reads it. The token fires at the earlier of that and the route's deadline, and no later
///   deadline set by a route extends it: a chain of services shares one shrinking budget. Hostile values have the
///   outcomes `DeadlineHeader` gives them (a repeated header: the smallest valid value; `0` or negative: already
///   passed, the token fires at once; huge: clamped; garbage: ignored).
/// - **Graceful shutdown** (reason `GracefulShutdownError`): the observing server shuts down (Vapor's `serve`
///   command on `SIGTERM`/`SIGINT`), or ``Vapor/Application/requestShutdown`` or `shutdown` is cancelled (its own
///   reason then).
/// - The token covers the route until it returns its `Response`. A response body written after that (a streamed
///   body) is not covered, and neither is a request body the route streams (Vapor ends it without an error when
///   the client goes away).
/// - Vapor does not cancel the route's task: hand the token to the work (a `Future`,
///   `HTTPClient.execute(…cancellationToken:)`), or check it.
/// - With `respondsToCancellation`, a route that fails once the token is cancelled is answered with the status of
///   the reason (`HTTPResponseStatus(cancellationReason:)`): `499` for a client gone, `504` for the deadline,
///   `503` for the shutdown; other errors, and other reasons, go on to Vapor's error handling.
/// - Used twice (an application-wide one and a route group's), the inner one only sets its deadline.
/// - It adds no task of its own: the route runs as it would without it. A request without a deadline (none here,
///   none from a route group, none in its header) on an observed connection and with no `shutdown` token arms no timer and registers nothing
///   outside its connection (which follows the shutdown once for all its requests); within its connection's read, it
///   reuses what the connection's last request but one left, when nothing holds that request's token any more.
public struct RequestCancellationMiddleware: Middleware {
    /// The deadline of each request, from when the middleware starts it; `nil` for none.
    public let deadline: Duration?
    /// A token that also cancels every request (as well as the application's graceful shutdown).
    public let shutdown: CancellationToken
    /// Whether a route that fails once its token is cancelled is answered with `499`, `504` or `503`.
    public let respondsToCancellation: Bool
    /// The header the caller's remaining deadline is read from; nil to ignore callers' deadlines.
    public let deadlineHeader: DeadlineHeader?

    /// Creates the middleware.
    ///
    /// ```swift
    /// app.middleware.use(RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
    /// ```
    ///
    /// - Parameters:
    ///   - deadline: The deadline of each request; `nil` (the default) for none.
    ///   - shutdown: A token that also cancels every request; `.none` by default.
    ///   - respondsToCancellation: Answer a route that fails once its token is cancelled with the status of the
    ///     reason; `false` by default (the error reaches Vapor's error handling).
    ///   - deadlineHeader: The header that carries the caller's remaining deadline, `Connect-Timeout-Ms` by default;
    ///     `nil` to ignore callers' deadlines.
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
    }

    /// Runs `next` with the request's token in `request.cancellation`; Vapor calls it for each request.
    ///
    /// ```swift
    /// let response = RequestCancellationMiddleware().respond(to: request, chainingTo: responder)
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response of `next`, or the status of the reason (with `respondsToCancellation`).
    public func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let found = ClientConnection.lookUp(remote: request.remoteAddress, loop: request.eventLoop)
        let connection = found?.connection
        // On an unobserved connection the request's state goes into Vapor's `Request.storage`; an observed one lists
        // it (cheaper: a write to the storage takes its lock, copies its dictionary and boxes the value). Outside
        // its connection's read (after an `AsyncMiddleware`, say), a middleware before this one may have started the
        // request on a connection that has ended since: the orphans keep it then.
        // The storage is read once here, and that copy written back below on an unobserved connection.
        var storage: Storage?
        let reading = found?.reading
        if reading == nil {
            let read = request.storage
            if let outer = RequestState.unlisted(of: request, storage: read) {
                return respond(to: request, startedAs: outer, chainingTo: next)
            }
            storage = read
        }
        // An observed connection follows the application's shutdown itself (one registration per connection);
        // `shutdown` is linked only when it can be cancelled (it is `.none` by default).
        let caller = callerDeadline(of: request)
        let state: RequestState
        var isSpare = false
        if let reading, caller == nil, !shutdown.canBeCancelled, let spare = reading.spareState() {
            // In its connection's read, a request with nothing linked and no caller's deadline takes the state an
            // earlier request of the connection left with nothing holding it: no allocation, no release.
            spare.reuse()
            state = spare
            isSpare = true
        } else {
            let stop: CancellationRequest
            if connection == nil {
                stop = CancellationRequest(linkedTo: [request.application.requestShutdown.token, shutdown])
            } else if shutdown.canBeCancelled {
                stop = CancellationRequest(linkedTo: [shutdown])
            } else {
                stop = CancellationRequest()
            }
            state = RequestState(request: stop, connection: connection, caller: caller)
        }
        let stop = state.request
        if let connection {
            let watch = connection.watch(
                request,
                as: state,
                shutdown: { request.application.requestShutdown.token },
                sparesTo: reading
            )
            switch watch {
            case .watching:
                break
            case .started(let outer):
                if isSpare { reading?.returnSpare(state) }
                return respond(to: request, startedAs: outer, chainingTo: next)
            case .refused(let reason):
                // The client went away or the application shut down before this request started, or, for a
                // middleware after the first, while the first ran: the first's state is then in the storage or
                // among the orphans.
                if let outer = RequestState.unlisted(of: request, storage: request.storage) {
                    return respond(to: request, startedAs: outer, chainingTo: next)
                }
                request.storage[RequestCancellationKey.self] = RequestCancellation(state: state)
                stop.cancel(reason: reason)
            }
        } else {
            // Unobserved: `found` is nil, so the storage was read above.
            var written = storage ?? request.storage
            written[RequestCancellationKey.self] = RequestCancellation(state: state)
            request.storage = written
        }
        // The caller's deadline only when there is one: an optional `CancellationDeadline` made for nothing still
        // costs its destruction through the clock existential's value witnesses.
        if let caller = state.caller {
            stop.cancel(after: deadline, notAfter: caller.deadline)
        } else if let deadline {
            stop.cancel(after: deadline)
        }
        let response = next.respond(to: request)
        guard respondsToCancellation else {
            guard connection != nil else { return response }
            // Not `always`, which wraps the callback in a closure of its own (an allocation).
            response.whenComplete { _ in state.finished() }
            return response
        }
        // One callback and one promise (not `flatMapErrorThrowing` then `map`: two of each).
        let answer = response.eventLoop.makePromise(of: Response.self)
        response.whenComplete { result in
            state.finished()
            switch result {
            case .success(let response):
                answer.succeed(response)
            case .failure(let error):
                if let reason = state.request.token.cancellationReason,
                    let status = HTTPResponseStatus(cancellationReason: reason)
                {
                    answer.succeed(Response(status: status))
                } else {
                    answer.fail(error)
                }
            }
        }
        return answer.futureResult
    }
}

extension RequestCancellationMiddleware {
    /// A middleware before this one started the request: this one only sets its deadline.
    private func respond(
        to request: Request,
        startedAs outer: RequestState,
        chainingTo next: any Responder
    ) -> EventLoopFuture<Response> {
        if let deadline { RequestCancellation(state: outer).setDeadline(deadline) }
        return next.respond(to: request)
    }

    /// The deadline the caller sent in ``deadlineHeader``, from now, if any valid one.
    private func callerDeadline(of request: Request) -> BoxedDeadline? {
        guard let deadlineHeader else { return nil }
        let values = request.headers.values(ofField: deadlineHeader.name)
        guard !values.isEmpty, let deadline = deadlineHeader.callerDeadline(in: values) else { return nil }
        return BoxedDeadline(deadline)
    }
}

/// Sets the deadline of the requests of a route group: their token (`request.cancellation.token`) is cancelled with
/// `DeadlineExceededError` when it passes, replacing the application's default deadline (the last one set wins), but
/// never later than the caller's (``RequestCancellation/callerDeadline``).
///
/// ```swift
/// app.middleware.use(RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
/// app.grouped("reports")
///     .grouped(RequestDeadlineMiddleware(.seconds(60)))
///     .get(":id") { request async throws -> String in
///         try await report(cancellationToken: request.cancellation.token)
///     }
/// ```
///
/// Without a ``RequestCancellationMiddleware`` before it, it is one with this deadline (and no responses).
public struct RequestDeadlineMiddleware: Middleware {
    /// The deadline, from when this middleware runs.
    public let deadline: Duration

    /// Creates the middleware.
    ///
    /// ```swift
    /// let slow = RequestDeadlineMiddleware(.seconds(60))
    /// ```
    ///
    /// - Parameter deadline: The deadline of each request of the group, from when the middleware runs.
    public init(_ deadline: Duration) {
        self.deadline = deadline
    }

    /// Sets the deadline, then runs `next`; Vapor calls it for each request of the group.
    ///
    /// ```swift
    /// let response = RequestDeadlineMiddleware(.seconds(1)).respond(to: request, chainingTo: responder)
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response of `next`.
    public func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        RequestCancellationMiddleware(deadline: deadline).respond(to: request, chainingTo: next)
    }
}
