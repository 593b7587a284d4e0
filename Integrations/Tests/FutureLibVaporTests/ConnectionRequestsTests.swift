import IntegrationsTestSupport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Synchronization
import Testing
import Vapor

@testable import FutureLibVapor

extension VaporApplicationTests {
    /// Where a request's cancellation lives on an observed connection: listed by the connection, not in Vapor's
    /// `Request.storage`, from the middleware's start until the next request on the connection starts or the
    /// connection ends; then in the storage if anything still holds the request.
    @Suite(.timeLimit(.minutes(5)))
    struct ConnectionRequestsTests {
        @Test(
            "a request's token is found through its connection while it runs and after its response; the next request's start hands a request that is still held to the orphans, not to its storage, and lets go of one nobody holds"
        )
        func requestsStayFindableAfterTheirResponse() async throws {
            try await withObservedConnection(port: 40_101) { connection in
                // A request nobody else holds: the connection keeps it until the next request starts.
                weak var released: Request?
                var firstToken: CancellationToken?
                do {
                    let first = connection.request()
                    released = first
                    let response = connection.start(first)
                    firstToken = first.cancellation.token
                    #expect(first.cancellation.observesClient)
                    #expect(!first.storage.contains(RequestCancellationKey.self))
                    connection.answer(first, response)
                    // A middleware in front of this one reads the reason after the response is ready.
                    #expect(first.cancellation.token == firstToken)
                }
                #expect(released != nil, "the connection holds its last request until the next one starts")

                let second = connection.request()
                let secondResponse = connection.start(second)
                #expect(released == nil, "the next request's start lets go of a request nobody holds")
                #expect(firstToken?.isCancellationRequested == false)
                let secondToken = second.cancellation.token
                #expect(secondToken != firstToken)
                connection.answer(second, secondResponse)

                // Still held (a task the route left running, say): the orphans keep its state; its storage, which
                // its route may be writing at that moment, is left alone.
                let third = connection.request()
                _ = connection.start(third)
                #expect(OrphanedRequests.state(of: second) != nil)
                #expect(!second.storage.contains(RequestCancellationKey.self))
                #expect(second.cancellation.token == secondToken)
                #expect(second.cancellation.observesClient)
                #expect(!third.storage.contains(RequestCancellationKey.self))
            }
        }

        @Test(
            "a request whose token something still holds leaves its state to nobody: the next request gets a token of its own, and the client's leaving then cancels only the request in flight"
        )
        func heldTokenIsNotReused() async throws {
            try await withObservedConnection(port: 40_107) { connection in
                let kept: CancellationToken
                do {
                    let first = connection.request()
                    let response = connection.start(first)
                    kept = first.cancellation.token
                    connection.answer(first, response)
                }
                // The second request's start lets the first go (a spare only if nothing held its token); the
                // third would take that spare.
                do {
                    let second = connection.request()
                    let response = connection.start(second)
                    #expect(second.cancellation.token != kept)
                    connection.answer(second, response)
                }
                let third = connection.request()
                _ = connection.start(third)
                let thirdToken = third.cancellation.token
                #expect(thirdToken != kept)
                _ = try connection.channel.finish()
                #expect(thirdToken.cancellationReason is ClientDisconnectedError)
                #expect(!kept.isCancellationRequested, "the first request was answered before the client left")
            }
        }

        @Test(
            "the next request takes the state of an answered one that nothing holds (optimized builds: a debug build's copies keep every state from reuse), and the state serves it as a new one"
        )
        func answeredStateIsReused() async throws {
            try await withObservedConnection(port: 40_108) { connection in
                // Weak: the test's reference must not keep the state from reuse (nor stand for a new state that
                // happens to be allocated at a freed one's address).
                weak var firstState: RequestState?
                do {
                    let first = connection.request()
                    let response = connection.start(first)
                    firstState = first.cancellation.state
                    #expect(!first.cancellation.token.isCancellationRequested)
                    connection.answer(first, response)
                }
                // The second request's start lets the first go and keeps its state; the third takes it.
                do {
                    let second = connection.request()
                    let response = connection.start(second)
                    #expect(second.cancellation.state !== firstState, "the first state is spare while it runs")
                    connection.answer(second, response)
                }
                let third = connection.request()
                _ = connection.start(third)
                #if !DEBUG
                #expect(firstState != nil && third.cancellation.state === firstState)
                #endif
                let token = third.cancellation.token
                #expect(!token.isCancellationRequested)
                _ = try connection.channel.finish()
                #expect(token.cancellationReason is ClientDisconnectedError, "in flight when the client leaves")
            }
        }

        @Test(
            "the connection's end cancels the request in flight with ClientDisconnectedError, and its token stays readable among the orphans"
        )
        func connectionEndCancelsAndKeepsTheTokenReadable() async throws {
            weak var released: Request?
            let inFlight = try await withObservedConnection(port: 40_102) { connection in
                // Two requests at once (as without Vapor's pipelining support); the first one's response is ready
                // before the connection ends, so both are still listed then.
                let inFlight = connection.request()
                do {
                    let finished = connection.request()
                    released = finished
                    let response = connection.start(finished)
                    _ = connection.start(inFlight)
                    connection.answer(finished, response)
                }
                #expect(released != nil, "the connection still lists the finished request")
                #expect(!inFlight.cancellation.token.isCancellationRequested)
                return inFlight
            }
            #expect(inFlight.cancellation.token.cancellationReason is ClientDisconnectedError)
            #expect(inFlight.cancellation.observesClient)
            #expect(!inFlight.storage.contains(RequestCancellationKey.self))
            #expect(released == nil, "the connection's end lets go of the requests nobody holds")
        }

        @Test(
            "a request that starts once its client closed its side of the connection is cancelled at once with ClientDisconnectedError, and a route group's middleware after the first keeps the first's token"
        )
        func requestAfterTheClientLeft() async throws {
            try await withObservedConnection(port: 40_103) { connection in
                let before = connection.request()
                let beforeResponse = connection.start(before)
                connection.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
                #expect(before.cancellation.token.cancellationReason is ClientDisconnectedError)
                connection.answer(before, beforeResponse)

                let after = connection.request()
                let nested = try connection.start(after, nestedDeadline: .seconds(30))
                #expect(nested.token.cancellationReason is ClientDisconnectedError)
                #expect(after.cancellation.token == nested.token)
            }
        }

        @Test(
            "the orphans drop the requests that are gone once the table has doubled, keep the live ones, and a request they do not hold matches nothing"
        )
        func orphansDropGoneRequests() async throws {
            let application = try await Application.make(
                .testing,
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            )
            let loop = EmbeddedEventLoop()
            func state() -> RequestState {
                RequestState(request: CancellationRequest(), connection: nil, caller: nil)
            }
            weak var goneState: RequestState?
            weak var goneRequest: Request?
            // In a function of its own, so that nothing of it outlives the call.
            @inline(never) func adoptOne() {
                let gone = Request(application: application, on: loop)
                let orphan = state()
                goneState = orphan
                goneRequest = gone
                _ = OrphanedRequests.adopt(gone, state: orphan)
                let found = OrphanedRequests.state(of: gone)
                #expect(found === orphan)
            }
            adoptOne()
            #expect(goneRequest == nil)
            // The table is process-wide (other tests' orphans are in it): within as many adoptions as it holds,
            // it doubles and drops the gone ones.
            let adoptions = OrphanedRequests.count + 16
            var kept: [Request] = []
            var droppedGone = false
            while !droppedGone, kept.count < adoptions {
                let request = Request(application: application, on: loop)
                kept.append(request)
                let dropped = OrphanedRequests.adopt(request, state: state())
                droppedGone = dropped.states.contains { $0 === goneState }
                #expect(!dropped.states.contains { OrphanedRequests.state(of: request) === $0 })
            }
            #expect(droppedGone, "not dropped within \(adoptions) adoptions")
            #expect(goneState == nil, "the dropped state is released once the adopter lets go of it")
            #expect(kept.allSatisfy { OrphanedRequests.state(of: $0) != nil })
            #expect(OrphanedRequests.count <= 2 * kept.count + 16)
            #expect(OrphanedRequests.state(of: Request(application: application, on: loop)) == nil)
            try await application.asyncShutdown()
        }

        @Test(
            "two connections registered under one client address (a reconnect from the same port): a request's token is found on the older one, and a route group's middleware outside the read keeps the first's token once its connection ended"
        )
        func connectionsSharingAnAddress() async throws {
            try await withObservedConnection(port: 40_105) { older in
                let request = older.request()
                _ = older.start(request)
                let token = request.cancellation.token
                // The newer connection: registered under the same address and loop.
                let newerChannel = EmbeddedChannel(loop: older.channel.embeddedEventLoop)
                newerChannel.remoteAddress = older.address
                try newerChannel.pipeline.syncOperations.addHandler(ClientDisconnectObserver())
                #expect(ClientConnection.registeredCount >= 2)
                // Outside any read (an `async` route's task): the table's newest connection does not list it.
                #expect(request.cancellation.token == token)
                // Inside the older connection's read, through its observer.
                ReadingObserver.delivering(older.observer) {
                    #expect(request.cancellation.token == token)
                }
                // The older connection ends while the route runs; a route group's middleware then runs outside the
                // read (after an `AsyncMiddleware`) and finds the newer connection by the address.
                _ = try older.channel.finish()
                #expect(token.cancellationReason is ClientDisconnectedError)
                let seen = SeenCancellation()
                let nested = NestedResponder(deadline: RequestDeadlineMiddleware(.seconds(30)), next: seen)
                _ = nested.respond(to: request)
                #expect(seen.cancellation?.token == token)
                #expect(request.cancellation.token == token)
                _ = try newerChannel.finish()
            }
        }

        /// How a connection lets go of a request that something still holds.
        enum LettingGo: String, CaseIterable, Sendable {
            case connectionEnds
            case nextRequestStarts
        }

        @Test(
            "a reader on another thread finds the request's token in every read while its connection lets go of it (the list hands it to the orphans under its lock)",
            arguments: LettingGo.allCases
        )
        func readerDuringHandOff(_ lettingGo: LettingGo) async throws {
            for _ in 0..<100 {
                try await withObservedConnection(port: 40_106) { connection in
                    let request = connection.request()
                    let response = connection.start(request)
                    let token = request.cancellation.token
                    if lettingGo == .nextRequestStarts { connection.answer(request, response) }
                    let started = Atomic<Bool>(false)
                    let reading = Task.detached {
                        started.store(true, ordering: .releasing)
                        return (0..<500).filter { _ in request.cancellation.token != token }.count
                    }
                    // The reader is reading when the connection lets go.
                    while !started.load(ordering: .acquiring) { await Task.yield() }
                    switch lettingGo {
                    case .connectionEnds: _ = try connection.channel.finish()
                    case .nextRequestStarts: _ = connection.start(connection.request())
                    }
                    #expect(await reading.value == 0)
                    #expect(request.cancellation.token == token)
                }
            }
        }

        @Test(
            "a route group's middleware after the first sets the deadline of the first's token on an observed connection"
        )
        func nestedMiddlewareKeepsTheFirstsToken() async throws {
            try await withObservedConnection(port: 40_104) { connection in
                let request = connection.request()
                let nested = try connection.start(request, nestedDeadline: .seconds(30))
                #expect(request.cancellation.token == nested.token)
                let remaining = try #require(request.cancellation.token.timeRemaining)
                #expect(remaining > .seconds(1) && remaining <= .seconds(30))
                #expect(!request.storage.contains(RequestCancellationKey.self))
            }
        }
    }
}

/// One embedded connection with an observer, registered under 127.0.0.1:`port`, and an application whose
/// `RequestCancellationMiddleware` starts the requests made for it, each inside the connection's read as Vapor's
/// decoder delivers it.
private struct ObservedConnection {
    let application: Application
    let channel: EmbeddedChannel
    let observer: ClientDisconnectObserver
    let address: SocketAddress
    let responder = HeldResponder()

    func request() -> Request {
        Request(application: application, remoteAddress: address, on: channel.eventLoop)
    }

    /// Runs the middleware for `request`, inside the connection's read; returns the route's pending response.
    func start(_ request: Request) -> EventLoopFuture<Response> {
        var response: EventLoopFuture<Response>?
        ReadingObserver.delivering(observer) {
            response = RequestCancellationMiddleware().respond(to: request, chainingTo: responder)
        }
        return response!
    }

    /// Runs the middleware, then a second one as a route group's, for `request`; returns what the second saw.
    func start(_ request: Request, nestedDeadline: Duration) throws -> RequestCancellation {
        let seen = SeenCancellation()
        ReadingObserver.delivering(observer) {
            let nested = NestedResponder(deadline: RequestDeadlineMiddleware(nestedDeadline), next: seen)
            _ = RequestCancellationMiddleware().respond(to: request, chainingTo: nested)
        }
        return try #require(seen.cancellation)
    }

    /// The route answers `request`.
    func answer(_ request: Request, _ response: EventLoopFuture<Response>) {
        let answered = NIOLockedValueBox(false)
        response.whenSuccess { _ in answered.withLockedValue { $0 = true } }
        responder.answer(request)
        channel.embeddedEventLoop.run()
        #expect(answered.withLockedValue { $0 })
    }
}

private func withObservedConnection<Result>(
    port: Int,
    _ body: (ObservedConnection) async throws -> Result
) async throws -> Result {
    let application = try await Application.make(
        .testing,
        logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
    )
    let channel = EmbeddedChannel()
    let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
    channel.remoteAddress = address
    let observer = ClientDisconnectObserver()
    try channel.pipeline.syncOperations.addHandler(observer)
    let connection = ObservedConnection(
        application: application,
        channel: channel,
        observer: observer,
        address: address
    )
    let result: Result
    do {
        result = try await body(connection)
    } catch {
        _ = try? channel.finish()
        try await application.asyncShutdown()
        throw error
    }
    do {
        _ = try channel.finish()
    } catch ChannelError.alreadyClosed {
        // The test ended the connection itself.
    }
    try await application.asyncShutdown()
    return result
}

/// A route whose responses wait until the test answers them.
private final class HeldResponder: Responder, @unchecked Sendable {
    // Confined to the embedded event loop's thread (the test's).
    private var pending: [ObjectIdentifier: EventLoopPromise<Response>] = [:]

    func respond(to request: Request) -> EventLoopFuture<Response> {
        let promise = request.eventLoop.makePromise(of: Response.self)
        pending[ObjectIdentifier(request)] = promise
        return promise.futureResult
    }

    func answer(_ request: Request) {
        pending.removeValue(forKey: ObjectIdentifier(request))?.succeed(Response(status: .ok))
    }
}

/// A route that records the request's cancellation and answers at once.
private final class SeenCancellation: Responder, @unchecked Sendable {
    // Written once, on the embedded event loop's thread (the test's), before it is read there.
    var cancellation: RequestCancellation?

    func respond(to request: Request) -> EventLoopFuture<Response> {
        cancellation = request.cancellation
        return request.eventLoop.makeSucceededFuture(Response(status: .ok))
    }
}

/// A middleware in front of a responder.
private struct NestedResponder: Responder {
    let deadline: RequestDeadlineMiddleware
    let next: any Responder

    func respond(to request: Request) -> EventLoopFuture<Response> {
        deadline.respond(to: request, chainingTo: next)
    }
}
