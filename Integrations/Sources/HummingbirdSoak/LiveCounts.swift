// What a finished request must not leave behind, counted between rounds and at the end: the handlers still
// running, the request objects still alive (a sample of them), the handlers on the application's shutdown token
// (each live request's link), the system clock's pending timers (each live request's deadline) and the
// connections with a disconnect observer.
import FutureLibHummingbird
import Hummingbird
import IntegrationsTestSupport
import NIOConcurrencyHelpers

/// Handlers running now, and weak references to a sample of the requests' `CancellationRequest`s.
final class RequestCensus: Sendable {
    private struct State {
        var inFlight = 0
        var seen = 0
        var sample: [WeakCancellationRequest] = []
    }

    /// One request in `sampleEvery` is sampled.
    let sampleEvery: Int
    private let state = NIOLockedValueBox(State())

    init(sampleEvery: Int) {
        self.sampleEvery = sampleEvery
    }

    /// A handler started with `request`'s token.
    func started(_ request: CancellationRequest?) {
        state.withLockedValue { state in
            state.inFlight += 1
            state.seen += 1
            if let request, state.seen % sampleEvery == 0 { state.sample.append(WeakCancellationRequest(request)) }
        }
    }

    /// A handler returned.
    func finished() {
        state.withLockedValue { $0.inFlight -= 1 }
    }

    /// Handlers running now.
    var inFlight: Int { state.withLockedValue { $0.inFlight } }

    /// Sampled requests still alive, and how many were sampled since the last ``forgetSample()``.
    var sampledAlive: (alive: Int, sampled: Int) {
        state.withLockedValue { state in (state.sample.count(where: { $0.request != nil }), state.sample.count) }
    }

    /// Starts a new sample (each round checks its own).
    func forgetSample() {
        let old = state.withLockedValue { state in
            defer { state.sample = [] }
            return state.sample
        }
        _ = old
    }
}

/// The middleware that counts handlers and samples requests; after `RequestCancellationMiddleware`, whose request
/// it reads.
struct CensusMiddleware: RouterMiddleware {
    typealias Context = BasicCancellableRequestContext
    let census: RequestCensus

    @concurrent func handle(
        _ request: Request,
        context: Context,
        next: @concurrent (Request, Context) async throws -> Response
    ) async throws -> Response {
        census.started(context.cancellation.request)
        defer { census.finished() }
        return try await next(request, context)
    }
}

/// One count of what the requests leave behind.
struct LiveCounts: Equatable, CustomStringConvertible {
    /// Handlers running.
    var inFlight: Int
    /// Sampled requests (`CancellationRequest`) still alive.
    var requests: Int
    /// Handlers registered on the shutdown token (each live request's link to it), from its debug description.
    var registrations: Int
    /// The system clock's pending timers (each live request's deadline).
    var timers: Int
    /// Connections with a disconnect observer (open connections).
    var connections: Int

    static func now(census: RequestCensus, shutdown: CancellationToken) -> LiveCounts {
        LiveCounts(
            inFlight: census.inFlight,
            requests: census.sampledAlive.alive,
            registrations: handlersRegistered(on: shutdown),
            timers: SystemClock().pendingTimerCount,
            connections: ClientDisconnectObserver.observedConnections
        )
    }

    /// Nothing left but `connections` open connections (the clients' kept-alive ones).
    func isClear(connections open: Int) -> Bool {
        inFlight == 0 && requests == 0 && registrations == 0 && timers == 0 && connections <= open
    }

    var description: String {
        "in flight \(inFlight), requests alive \(requests), registrations \(registrations), timers \(timers),"
            + " connections \(connections)"
    }
}

/// The handlers registered on `token`, as its debug description tells them (`active; 3 handlers registered; …`);
/// -1 when the description does not say (the token was cancelled).
func handlersRegistered(on token: CancellationToken) -> Int {
    for part in String(reflecting: token).split(separator: ";") {
        let words = part.split(separator: " ")
        if words.count > 1, words[1].hasPrefix("handler"), let count = Int(words[0]) { return count }
    }
    return -1
}
