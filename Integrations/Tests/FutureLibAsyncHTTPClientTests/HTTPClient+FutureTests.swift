import AsyncHTTPClient
import Dispatch
import FutureLib
import FutureLibAsyncHTTPClient
import IntegrationsTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// Each test starts its own loopback server and client, so the server's counters are the test's alone.
@Suite(.timeLimit(.minutes(5)))
struct HTTPClientFutureTests {
    @Test("a request completes with its whole body, and the connection stays open for reuse")
    func completesWithTheBody() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.execute(
                server.url("/slow-body?chunks=3&ms=1"),
                upTo: 1 << 20,
                cancellationToken: CancellationRequest().token
            ).value()
            #expect(response.status == .ok)
            let body = try await response.body.collect(upTo: 1 << 20)
            #expect(body.readableBytes == 3 * 16)
            #expect(server.current.closedEarly == 0)
        }
    }

    @Test("a long-lived token keeps nothing of a finished request: its handler is released when the request ends")
    func longLivedTokenKeepsNothing() async throws {
        let shutdown = CancellationRequest()  // outlives the requests, as a server's token does
        // The fixture checks that every future was released once its request ended; a handler left on `shutdown`
        // would hold its future.
        try await withServerAndClient { server, client in
            for _ in 0..<3 {
                let response = try await client.execute(
                    server.url("/fast"),
                    upTo: 1024,
                    cancellationToken: shutdown.token
                ).value()
                #expect(response.status == .ok)
            }
        }
        #expect(!shutdown.token.isCancellationRequested)
    }

    @Test("before it is sent: an already cancelled token fails at once and makes no connection")
    func alreadyCancelledSendsNothing() async throws {
        try await withServerAndClient { server, client in
            let future = client.execute(server.url("/fast"), upTo: 1024, cancellationToken: .cancelled)
            #expect(future.isCompleted)
            await #expect(throws: CancellationError.self) { try await future.value() }
            // A later request on the same client is the barrier: by then, anything sent first has arrived.
            _ = try await client.execute(server.url("/fast"), upTo: 1024, cancellationToken: .none).value()
            #expect(server.current.requests == 1)
            #expect(server.current.accepted == 1)
        }
    }

    @Test("before it is sent: a request queued for a connection is cancelled and never reaches the server")
    func queuedRequestIsNeverSent() async throws {
        try await withServerAndClient(connectionsPerHost: 1) { server, client in
            let first = CancellationRequest()
            let blocking = client.execute(
                server.url("/slow-head?ms=600000"),
                upTo: 1024,
                cancellationToken: first.token
            )
            #expect(await server.waitUntil { $0.requests == 1 })
            let second = CancellationRequest()
            do {
                let queued = client.execute(server.url("/fast"), upTo: 1024, cancellationToken: second.token)
                second.cancel()
                #expect(queued.isCompleted)
                await #expect(throws: CancellationError.self) { try await queued.value() }
            }
            // AsyncHTTPClient takes a cancelled request out of its queue asynchronously: once the task behind the
            // future has ended, it is out, and freeing the connection below sends nothing more.
            #expect(await client.waitUntilLive(atMost: 1))
            first.cancel()
            await #expect(throws: CancellationError.self) { try await blocking.value() }
            #expect(await server.waitUntil { $0.closedEarly == 1 })
            #expect(server.current.requests == 1)
        }
    }

    @Test("waiting for the head: cancelling fails with CancellationError and the server sees the connection close")
    func cancelWhileWaitingForTheHead() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let future = client.execute(
                server.url("/slow-head?ms=600000"),
                upTo: 1024,
                cancellationToken: request.token
            )
            #expect(await server.waitUntil { $0.requests == 1 })
            request.cancel()
            #expect(future.isCompleted)  // at once, on the cancelling thread
            await #expect(throws: CancellationError.self) { try await future.value() }
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("while the body streams: cancelling fails with CancellationError and the server sees the connection close")
    func cancelWhileTheBodyStreams() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let future = client.execute(
                server.url("/slow-body?chunks=100000&ms=20"),
                upTo: 1 << 30,
                cancellationToken: request.token
            )
            #expect(await server.waitUntil { $0.chunksSent >= 3 })
            request.cancel()
            await #expect(throws: CancellationError.self) { try await future.value() }
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
            #expect(server.current.responsesCompleted == 0)
        }
    }

    @Test("a timer token cancels a slow request in flight")
    func timerTokenCancelsInFlight() async throws {
        try await withServerAndClient { server, client in
            let deadline = CancellationRequest()
            let future = client.execute(
                server.url("/slow-head?ms=600000"),
                upTo: 1024,
                cancellationToken: deadline.token
            )
            #expect(await server.waitUntil { $0.requests == 1 })
            deadline.cancel(after: .milliseconds(100))  // the timer fires while the client waits for the head
            await #expect(throws: CancellationError.self) { try await future.value() }
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test(
        "racing completion and cancellation: the future completes exactly once, with the response or CancellationError"
    )
    func raceCompletesExactlyOnce() async throws {
        // The iteration's request, cancelled from another thread the moment the server reads the request head:
        // the cancellation then races the response on the wire.
        let current = NIOLockedValueBox<CancellationRequest?>(nil)
        let onEvent: @Sendable (LoopbackHTTPServer.Event) -> Void = { event in
            guard case .request = event, let request = current.withLockedValue({ $0 }) else { return }
            DispatchQueue.global().async { request.cancel() }
        }
        try await withServerAndClient(onEvent: onEvent) { server, client in
            let iterations = 500
            var responses = 0
            var cancellations = 0
            for index in 0..<iterations {
                let request = CancellationRequest()
                // 0: cancelled right after the call; 1: when the server reads the request; 2: after completion.
                let mode = index % 3
                if mode == 1 { current.withLockedValue { $0 = request } }
                let future = client.execute(server.url("/fast"), upTo: 1024, cancellationToken: request.token)
                let calls = Atomic(0)
                let observed = Promise<Result<HTTPClientResponse, any Error>>()
                future.onComplete(on: .synchronous) { result in
                    calls.add(1, ordering: .relaxed)
                    observed.fulfill(result)
                }
                if mode == 0 { request.cancel() }
                let result = try await observed.future.value()
                if mode == 2 { request.cancel() }  // too late: the result stays
                current.withLockedValue { $0 = nil }
                switch result {
                case .success(let response):
                    #expect(try await response.body.collect(upTo: 1024) == ByteBuffer(string: "ok"))
                    responses += 1
                case .failure(let error):
                    #expect(error is CancellationError)
                    #expect(mode != 2)
                    cancellations += 1
                }
                #expect(future.result.map { "\($0)" } == "\(result)")
                #expect(calls.load(ordering: .relaxed) == 1)
            }
            #expect(responses + cancellations == iterations)
            // Late continuations would have run by now; none did.
            try await Task.sleep(for: .milliseconds(50))
            #expect(await server.waitUntil { $0.open <= 8 })  // at most the pool's idle connections remain
        }
    }

    @Test("no leaked connections or futures after many cancelled requests")
    func noLeaksAfterManyCancelledRequests() async throws {
        let count = Int(Environment.value("FUTURELIB_HTTP_CANCELLED_REQUESTS") ?? "") ?? 10_000
        // Requests in flight, by the id in their query, cancelled from another thread when the server reads them.
        let inFlight = NIOLockedValueBox<[Int: CancellationRequest]>([:])
        let onEvent: @Sendable (LoopbackHTTPServer.Event) -> Void = { event in
            guard case .request(_, let uri) = event, let id = Int(uri.split(separator: "id=").last ?? ""),
                let request = inFlight.withLockedValue({ $0.removeValue(forKey: id) })
            else { return }
            DispatchQueue.global().async { request.cancel() }
        }
        try await withServerAndClient(connectionsPerHost: 64, onEvent: onEvent) { server, client in
            let shutdown = CancellationRequest()  // long-lived, as a server's: must not collect a handler per request
            var id = 0
            while id < count {
                let batch = min(64, count - id)
                var futures: [Future<HTTPClientResponse>] = []
                for _ in 0..<batch {
                    id += 1
                    let request = CancellationRequest(linkedTo: [shutdown.token])
                    // 0: cancelled at once (queued or connecting); 1: waiting for the head; 2: in the body.
                    let phase = id % 3
                    if phase != 0 { inFlight.withLockedValue { $0[id] = request } }
                    let path = phase == 2 ? "/slow-body?chunks=1000&ms=50" : "/slow-head?ms=600000"
                    futures.append(
                        client.execute(server.url("\(path)&id=\(id)"), upTo: 1 << 30, cancellationToken: request.token)
                    )
                    if phase == 0 { request.cancel() }
                }
                for future in futures {
                    await #expect(throws: CancellationError.self) { try await future.value() }
                }
            }
            // Every request that reached the server was cut short: its connection closed early.
            #expect(await server.waitUntil { $0.closedEarly == $0.requests })
            #expect(server.current.responsesCompleted == 0)
            #expect(server.current.requests >= count * 2 / 3)
        }
    }

    @Test("a body longer than the limit fails with NIOTooManyBytesError, declared or streamed")
    func tooLongBody() async throws {
        try await withServerAndClient { server, client in
            // `/fast` declares its 2 bytes; `/slow-body` streams 16-byte chunks with no declared length.
            for path in ["/fast", "/slow-body?chunks=3&ms=1"] {
                let future = client.execute(server.url(path), upTo: 1, cancellationToken: CancellationRequest().token)
                await #expect(throws: NIOTooManyBytesError.self) { try await future.value() }
            }
        }
    }

    @Test("a redirect cycle fails with HTTPClientError.redirectCycleDetected, and nothing left on the token")
    func redirectCycle() async throws {
        try await withServerAndClient { server, client in
            let shutdown = CancellationRequest()
            // AsyncHTTPClient fails only the task on a redirect cycle, never the delegate.
            let future = client.execute(server.url("/redirect-self"), upTo: 1024, cancellationToken: shutdown.token)
            let error = await errorThrown { _ = try await future.value() }
            #expect(error as? HTTPClientError == .redirectCycleDetected)
            #expect(handlerCount(shutdown.token) == 0)
        }
    }

    @Test("cancelled after a redirect, waiting for the redirected head: CancellationError, the connection closed")
    func cancelledAfterARedirect() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let future = client.execute(server.url("/redirect-hang"), upTo: 1024, cancellationToken: request.token)
            #expect(await server.waitUntil { $0.requests == 2 })
            request.cancel()
            await #expect(throws: CancellationError.self) { try await future.value() }
            #expect(handlerCount(request.token) == 0)
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("a client that is shut down: AsyncHTTPClient's error, and nothing left on the token")
    func shutDownClient() async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        try await client.shutdown()
        let shutdown = CancellationRequest()
        let future = client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:9/"),
            timeout: .seconds(600),
            upTo: 1024,
            cancellationToken: shutdown.token
        )
        await #expect(throws: HTTPClientError.alreadyShutdown) { try await future.value() }
        #expect(handlerCount(shutdown.token) == 0)
    }

}
