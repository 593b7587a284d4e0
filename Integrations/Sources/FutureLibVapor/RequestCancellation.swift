import NIOConcurrencyHelpers
import Synchronization
public import Vapor

/// A request's cancellation: its token, which ``RequestCancellationMiddleware`` makes for each request
/// (`request.cancellation.token`).
///
/// ```swift
/// app.get("report") { request async throws -> String in
///     try await buildReport(cancellationToken: request.cancellation.token)
/// }
/// ```
public struct RequestCancellation: Sendable {
    // One reference and nothing else: Vapor's `Request.storage` copies and destroys the value through its generic
    // code several times a request, retaining and releasing each reference in it, and a `CancellationDeadline` (a
    // clock in an existential) would make each copy dearer still (`make bench-http-instructions`).
    let state: RequestState?

    var request: CancellationRequest? { state?.request }
    var connection: ClientConnection? { state?.connection }

    /// The request's token, cancelled when its client goes away (reason `ClientDisconnectedError`), its deadline
    /// passes (`DeadlineExceededError`) or the application shuts down gracefully (`GracefulShutdownError`),
    /// whichever comes first. `.none` outside ``RequestCancellationMiddleware``.
    ///
    /// ```swift
    /// let page = client.execute(upstreamRequest, timeout: .seconds(30), upTo: 1 << 20,
    ///                           cancellationToken: request.cancellation.token)
    /// ```
    public var token: CancellationToken {
        request?.token ?? .none
    }

    /// Whether the request's connection has a client-disconnect observer (the application's server is
    /// `.httpObservingClientDisconnects`), so that the token follows the client.
    ///
    /// ```swift
    /// assert(request.cancellation.observesClient, "app.servers.use(.httpObservingClientDisconnects)")
    /// ```
    public var observesClient: Bool {
        connection != nil
    }

    /// The deadline the caller sent in the middleware's deadline header (`Connect-Timeout-Ms` by default, which
    /// FutureLib's AsyncHTTPClient adapter sends), from when the middleware read it; `nil` when it sent none.
    ///
    /// ```swift
    /// app.get("slow") { request -> String in
    ///     if let caller = request.cancellation.callerDeadline {
    ///         print("the caller waits \(caller.remaining) more")
    ///     }
    ///     return "ok"
    /// }
    /// ```
    ///
    /// The request's token fires at the earlier of this and the route's deadline; read what is left of both with
    /// `request.cancellation.token.timeRemaining`.
    public var callerDeadline: CancellationDeadline? {
        state?.caller?.deadline
    }

    /// Sets the request's deadline to `delay` from now, replacing an earlier one (the last call wins), but never
    /// later than the caller's (``callerDeadline``): the token is then cancelled with `DeadlineExceededError` when
    /// it passes. Does nothing outside ``RequestCancellationMiddleware`` or once the token is cancelled.
    ///
    /// ```swift
    /// app.get("export") { request async throws -> String in
    ///     request.cancellation.setDeadline(.seconds(30))  // longer than the application's default
    ///     return try await export(cancellationToken: request.cancellation.token)
    /// }
    /// ```
    ///
    /// - Parameter delay: How long from now.
    public func setDeadline(_ delay: Duration) {
        request?.cancel(after: delay, notAfter: callerDeadline)
    }
}

/// What ``RequestCancellationMiddleware`` keeps of a request: its cancellation, its connection (if observed) and its
/// caller's deadline. The middleware's completion callback captures it and nothing else: a closure whose one capture
/// is an object needs no context of its own.
final class RequestState: Sendable {
    let request: CancellationRequest
    let connection: ClientConnection?
    /// The caller's deadline, boxed: most requests have none, and a `nil` reference costs nothing to store or
    /// release, where an optional `CancellationDeadline` (a clock in an existential) takes a value witness call
    /// (`make bench-http-instructions`).
    let caller: BoxedDeadline?
    // An atomic, not the connection's lock: the response's callback sets it on every request.
    private let responded = Atomic<Bool>(false)

    init(request: CancellationRequest, connection: ClientConnection?, caller: BoxedDeadline?) {
        self.request = request
        self.connection = connection
        self.caller = caller
    }

    /// The route's response is ready: the client's leaving no longer cancels the request.
    func finished() {
        responded.store(true, ordering: .releasing)
    }

    /// Whether the state can serve its connection's next request as a new one: its request is reusable
    /// (`CancellationRequest.isReusable`: no token of it is left, no timer, no links) and there was no caller's
    /// deadline. Asked by the holder of the only reference to the state.
    var isReusable: Bool {
        // Read here, not through the state by the caller: a caller that reads `state.request` holds a reference of
        // its own for the call, and the request is then never the only one.
        caller == nil && request.isReusable
    }

    /// Readies the state for its connection's next request: its caller holds the only reference to it.
    func reuse() {
        responded.store(false, ordering: .relaxed)
    }

    /// Whether the route's response is ready.
    var isFinished: Bool {
        responded.load(ordering: .acquiring)
    }

    /// The state kept for `request` outside an observed connection's list: in `storage`, the request's (an
    /// unobserved connection, or a request its connection refused), or among the orphans (a request its connection
    /// let go of while something still held it).
    static func unlisted(of request: Request, storage: Storage) -> RequestState? {
        // `contains` looks the key up without Vapor's generic read and cast, which cost more than the rest.
        if storage.contains(RequestCancellationKey.self), let stored = storage[RequestCancellationKey.self]?.state {
            return stored
        }
        return OrphanedRequests.state(of: request)
    }
}

/// A caller's deadline, as ``RequestState`` keeps it.
final class BoxedDeadline: Sendable {
    let deadline: CancellationDeadline

    init(_ deadline: CancellationDeadline) {
        self.deadline = deadline
    }
}

extension Request {
    /// The request's cancellation, which ``RequestCancellationMiddleware`` fills in: its token follows the client,
    /// the deadline and the application's graceful shutdown.
    ///
    /// ```swift
    /// app.get("users", ":id") { request async throws -> String in
    ///     try await fetchUser(request.parameters.get("id"), cancellationToken: request.cancellation.token)
    /// }
    /// ```
    public var cancellation: RequestCancellation {
        // An observed connection lists its requests' states, until the next request starts on it or it ends (then
        // the orphans keep those that something still holds); an unobserved one's are in the storage.
        RequestCancellation(
            state: ClientConnection.watchedState(of: self) ?? RequestState.unlisted(of: self, storage: storage)
        )
    }
}

struct RequestCancellationKey: StorageKey {
    typealias Value = RequestCancellation
}

extension Application {
    /// The request that cancels every request's token (``RequestCancellationMiddleware``) with
    /// `GracefulShutdownError`: ``ObservingHTTPServer`` cancels it when the server shuts down. An application run
    /// otherwise (under a `ServiceGroup`, say) cancels it itself when shutdown begins; a request that starts after
    /// that is cancelled at once.
    ///
    /// ```swift
    /// app.requestShutdown.cancel(reason: GracefulShutdownError())
    /// ```
    public var requestShutdown: CancellationRequest {
        if let existing = storage[RequestShutdownKey.self] { return existing }
        return locks.lock(for: RequestShutdownKey.self).withLock {
            if let existing = storage[RequestShutdownKey.self] { return existing }
            let shutdown = CancellationRequest()
            storage[RequestShutdownKey.self] = shutdown
            return shutdown
        }
    }
}

struct RequestShutdownKey: StorageKey, LockKey {
    typealias Value = CancellationRequest
}
