import AsyncHTTPClient
import FutureLibAsyncHTTPClient
import FutureLibHummingbird
import HTTPTypes
import Hummingbird
import IntegrationsTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// The deadline across HTTP services on loopback: FutureLib's AsyncHTTPClient adapter writes what its token has left
/// into `Connect-Timeout-Ms`, and a Hummingbird application's request token fires at the earlier of that and the
/// route's deadline. Timings are printed, never asserted; what is asserted holds on any machine (clocks only move
/// forward, and the header is rounded down).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct DeadlineHeaderLoopbackTests {
    @Test func `the client sends what its token has left, bounded by its timeout and by a value already there`()
        async throws
    {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let router = Router(context: BasicCancellableRequestContext.self)
        router.get("header") { request, _ -> String in
            request.headers[values: .init("Connect-Timeout-Ms")!].joined(separator: "|")
        }
        let client = HTTPClient(eventLoopGroup: group)
        do {
            try await withRunningApplication(router: router, server: .http1(), group: group) { port, _ in
                let url = "http://127.0.0.1:\(port)/header"
                func received(
                    _ token: CancellationToken,
                    timeout: TimeAmount = .seconds(30),
                    header: DeadlineHeader? = .connectTimeout,
                    preset: String? = nil
                ) async throws -> String {
                    var request = HTTPClientRequest(url: url)
                    if let preset { request.headers.add(name: "Connect-Timeout-Ms", value: preset) }
                    let response = try await client.execute(
                        request,
                        timeout: timeout,
                        upTo: 1024,
                        deadlineHeader: header,
                        cancellationToken: token
                    ).value()
                    return String(buffer: try await response.body.collect(upTo: 1024))
                }
                // The streaming form (the head, then the body as it streams) sends it the same way.
                func receivedStreaming(
                    _ token: CancellationToken,
                    header: DeadlineHeader? = .connectTimeout
                ) async throws -> String {
                    let response = try await client.execute(
                        HTTPClientRequest(url: url),
                        timeout: .seconds(30),
                        deadlineHeader: header,
                        cancellationToken: token
                    ).value()
                    return String(buffer: try await response.body.collect(upTo: 1024))
                }
                // A ManualClock makes the token's time left exact.
                let clock = ManualClock()
                let deadline = CancellationRequest(cancelAfter: .milliseconds(2_750), clock: clock)
                clock.advance(by: .milliseconds(250))
                let plain = try await received(deadline.token)
                let shorterTimeout = try await received(deadline.token, timeout: .seconds(1))
                let noDeadline = try await received(.none)
                let preset = try await received(deadline.token, preset: "700")
                let optedOut = try await received(deadline.token, header: nil)
                let linked = CancellationRequest(linkedTo: deadline.token, timeout: .seconds(9), clock: clock)
                let inherited = try await received(linked.token)
                #expect(plain == "2500")
                #expect(shorterTimeout == "1000")  // the timeout is earlier
                #expect(noDeadline == "30000")  // no deadline: the timeout alone
                #expect(preset == "700")  // a value already there is never raised
                #expect(optedOut == "")  // deadlineHeader: nil
                #expect(inherited == "2500")  // a call inherits its caller's deadline
                #expect(try await receivedStreaming(deadline.token) == "2500")
                #expect(try await receivedStreaming(.none) == "30000")
                #expect(try await receivedStreaming(deadline.token, header: nil) == "")
                // The async form (the calling task, a response handler) sends it the same way.
                func receivedScoped(
                    _ token: CancellationToken,
                    header: DeadlineHeader? = .connectTimeout
                )
                    async throws -> String
                {
                    try await client.execute(
                        HTTPClientRequest(url: url),
                        timeout: .seconds(30),
                        deadlineHeader: header,
                        cancellationToken: token
                    ) { response in String(buffer: try await response.body.collect(upTo: 1024)) }
                }
                #expect(try await receivedScoped(deadline.token) == "2500")
                #expect(try await receivedScoped(.none) == "30000")
                #expect(try await receivedScoped(deadline.token, header: nil) == "")
            }
        } catch {
            try await client.shutdown()
            try await group.shutdownGracefully()
            throw error
        }
        try await client.shutdown()
        try await group.shutdownGracefully()
    }

    @Test func `an application sees the caller's smaller budget and answers 504 at the caller's deadline`()
        async throws
    {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let seen = NIOLockedValueBox<(remaining: Duration?, reason: (any Error)?)>((nil, nil))
        let router = Router(context: BasicCancellableRequestContext.self)
        router.add(middleware: RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
        router.get("wait") { _, context -> String in
            let token = context.cancellation.token
            seen.withLockedValue { $0.remaining = token.timeRemaining }
            await token.wait()  // a handler that stops only when its token fires
            seen.withLockedValue { $0.reason = token.cancellationReason }
            throw CancellationError()
        }
        let client = HTTPClient(eventLoopGroup: group)
        do {
            try await withRunningApplication(router: router, server: .http1(), group: group) { port, _ in
                // The caller says it has 300 ms; this client itself would wait 30 s (no token, a long timeout).
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/wait")
                request.headers.add(name: "Connect-Timeout-Ms", value: "300")
                let started = ContinuousClock.now
                let response = try await client.execute(
                    request,
                    timeout: .seconds(30),
                    upTo: 1024,
                    cancellationToken: .none
                ).value()
                let elapsed = ContinuousClock.now - started
                #expect(response.status == .gatewayTimeout)
                let (remaining, reason) = seen.withLockedValue { $0 }
                #expect(reason is DeadlineExceededError)
                // At most the caller's 300 ms, never the route's 10 s. (Not "more than zero": on a busy machine
                // the handler may start after the 300 ms have passed, and then sees none left.)
                #expect(remaining.map { $0 <= .milliseconds(300) } == true)
                print(
                    "caller's budget 300 ms, route's 10 s: handler saw \(remaining.map(String.init(describing:)) ?? "none") left, 504 after \(elapsed)"
                )
            }
        } catch {
            try await client.shutdown()
            try await group.shutdownGracefully()
            throw error
        }
        try await client.shutdown()
        try await group.shutdownGracefully()
    }

    @Test func `a two-hop chain shares one shrinking budget: the leaf never has more than the edge had left`()
        async throws
    {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let client = HTTPClient(eventLoopGroup: group)
        // The leaf answers with what its token had left when its handler started.
        let leafRouter = Router(context: BasicCancellableRequestContext.self)
        leafRouter.add(middleware: RequestCancellationMiddleware(deadline: .seconds(10), respondsToCancellation: true))
        leafRouter.get("leaf") { _, context -> String in
            let remaining = context.cancellation.token.timeRemaining ?? .zero
            return "\(remaining.attoseconds / 1_000)"  // femtoseconds: exact enough, and an integer
        }
        do {
            try await withRunningApplication(router: leafRouter, server: .http1(), group: group) { leafPort, _ in
                // The edge has a route deadline of 30 s and calls the leaf with its request's token. (Long enough
                // that a busy machine does not use it up before the leaf answers, which an 800 ms one could:
                // the round then fails with the edge's 504 instead of checking the budgets.)
                let edgeRouter = Router(context: BasicCancellableRequestContext.self)
                edgeRouter.add(
                    middleware: RequestCancellationMiddleware(
                        deadline: .seconds(30),
                        respondsToCancellation: true
                    )
                )
                edgeRouter.get("edge") { _, context -> String in
                    let token = context.cancellation.token
                    let atStart = token.timeRemaining ?? .zero
                    try await Task.sleep(for: .milliseconds(50))  // some work of its own first
                    let atCall = token.timeRemaining ?? .zero
                    let response = try await client.execute(
                        HTTPClientRequest(url: "http://127.0.0.1:\(leafPort)/leaf"),
                        timeout: .seconds(30),
                        upTo: 1024,
                        cancellationToken: token
                    ).value()
                    let leaf = String(buffer: try await response.body.collect(upTo: 1024))
                    return "\(atStart.attoseconds / 1_000) \(atCall.attoseconds / 1_000) \(leaf)"
                }
                try await withRunningApplication(router: edgeRouter, server: .http1(), group: group) { edgePort, _ in
                    for round in 0..<5 {
                        let response = try await client.execute(
                            HTTPClientRequest(url: "http://127.0.0.1:\(edgePort)/edge"),
                            timeout: .seconds(30),
                            upTo: 1024,
                            cancellationToken: .none
                        ).value()
                        let body = String(buffer: try await response.body.collect(upTo: 1024))
                        let figures = body.split(separator: " ").compactMap { Int128(String($0)) }
                        #expect(response.status == .ok && figures.count == 3, "\(body)")
                        guard figures.count == 3 else { return }
                        let (atStart, atCall, leaf) = (figures[0], figures[1], figures[2])
                        // The edge's budget shrinks as it works, and the leaf never gets more than the edge had
                        // left when it called (the header is read later, and rounded down).
                        #expect(atStart <= 30_000_000_000_000_000)
                        #expect(atCall <= atStart)
                        #expect(leaf <= atCall && leaf > 0)
                        func ms(_ femtoseconds: Int128) -> String {
                            "\(Double(femtoseconds) / 1e12) ms"
                        }
                        print(
                            "round \(round): edge has \(ms(atStart)) at start, \(ms(atCall)) at its call; "
                                + "the leaf starts with \(ms(leaf)) (\(ms(atCall - leaf)) spent in transit)"
                        )
                    }
                }
            }
        } catch {
            try await client.shutdown()
            try await group.shutdownGracefully()
            throw error
        }
        try await client.shutdown()
        try await group.shutdownGracefully()
    }
}
