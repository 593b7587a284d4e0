import AsyncHTTPClient
import Dispatch
import FutureLib
import IntegrationsTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing

@testable import FutureLibAsyncHTTPClient

/// The async form: the request runs under the caller's task, its response handed to a closure that the token covers.
@Suite(.timeLimit(.minutes(5)))
struct HTTPClientScopedTests {
    @Test("a request returns what its response handler returns, and the connection stays open for reuse")
    func returnsTheHandlersValue() async throws {
        try await withServerAndClient { server, client in
            let token = CancellationRequest().token
            let bytes = try await client.client.execute(
                HTTPClientRequest(url: server.url("/slow-body?chunks=3&ms=1")),
                timeout: .seconds(600),
                cancellationToken: token
            ) { response in
                #expect(response.status == .ok)
                return try await response.body.collect(upTo: 1 << 20).readableBytes
            }
            #expect(bytes == 3 * 16)
            #expect(server.current.closedEarly == 0)
            #expect(!Task.isCancelled)
        }
    }

    @Test("a long-lived token keeps nothing of a finished request: no handler stays registered")
    func longLivedTokenKeepsNothing() async throws {
        let shutdown = CancellationRequest()  // outlives the requests, as a server's token does
        try await withServerAndClient { server, client in
            for _ in 0..<3 {
                let status = try await client.client.execute(
                    HTTPClientRequest(url: server.url("/fast")),
                    timeout: .seconds(600),
                    cancellationToken: shutdown.token
                ) { response in response.status }
                #expect(status == .ok)
                #expect(handlerCount(shutdown.token) == 0)
            }
        }
        #expect(!shutdown.token.isCancellationRequested)
    }

    @Test("before it is sent: an already cancelled token throws at once, makes no connection, calls no handler")
    func alreadyCancelledSendsNothing() async throws {
        try await withServerAndClient { server, client in
            await #expect(throws: CancellationError.self) {
                try await client.client.execute(
                    HTTPClientRequest(url: server.url("/fast")),
                    timeout: .seconds(600),
                    cancellationToken: .cancelled
                ) { _ in Issue.record("the handler ran") }
            }
            #expect(!Task.isCancelled)  // nothing was registered, so nothing cancelled this task
            // A later request on the same client is the barrier: by then, anything sent first has arrived.
            _ = try await client.execute(server.url("/fast"), upTo: 1024, cancellationToken: .none).value()
            #expect(server.current.requests == 1)
            #expect(server.current.accepted == 1)
        }
    }

    @Test("waiting for the head: cancelling throws CancellationError and the server sees the connection close")
    func cancelWhileWaitingForTheHead() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let call = Task {
                try await client.client.execute(
                    HTTPClientRequest(url: server.url("/slow-head?ms=600000")),
                    timeout: .seconds(600),
                    cancellationToken: request.token
                ) { _ in Issue.record("the handler ran") }
            }
            #expect(await server.waitUntil { $0.requests == 1 })
            request.cancel()
            await #expect(throws: CancellationError.self) { try await call.value }
            #expect(request.token.cancellationReason is CancellationError)
            #expect(handlerCount(request.token) == 0)
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("while the body streams: cancelling throws CancellationError and the server sees the connection close")
    func cancelWhileTheBodyStreams() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let call = Task {
                try await client.client.execute(
                    HTTPClientRequest(url: server.url("/slow-body?chunks=100000&ms=20")),
                    timeout: .seconds(600),
                    cancellationToken: request.token
                ) { response in
                    var chunks = 0
                    for try await _ in response.body {
                        chunks += 1
                        if chunks == 2 { DispatchQueue.global().async { request.cancel() } }  // during a later pull
                    }
                    return chunks
                }
            }
            await #expect(throws: CancellationError.self) { try await call.value }
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
            #expect(server.current.responsesCompleted == 0)
        }
    }

    @Test("a deadline cancels a slow request in flight: CancellationError, reason DeadlineExceededError, no timer left")
    func deadlineCancelsInFlight() async throws {
        try await withServerAndClient { server, client in
            let clock = ManualClock()
            let deadline = CancellationRequest(cancelAfter: .seconds(5), clock: clock)
            let call = Task {
                try await client.client.execute(
                    HTTPClientRequest(url: server.url("/slow-head?ms=600000")),
                    timeout: .seconds(600),
                    cancellationToken: deadline.token
                ) { _ in Issue.record("the handler ran") }
            }
            #expect(await server.waitUntil { $0.requests == 1 })
            clock.advance(by: .seconds(5))  // the timer fires while the client waits for the head
            await #expect(throws: CancellationError.self) { try await call.value }
            #expect(deadline.token.cancellationReason is DeadlineExceededError)
            #expect(clock.pendingTimerCount == 0)
            #expect(handlerCount(deadline.token) == 0)
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("the token cancels the request, never the calling task")
    func callingTaskIsNotCancelled() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let call = Task { () -> Bool in
                do {
                    try await client.client.execute(
                        HTTPClientRequest(url: server.url("/slow-head?ms=600000")),
                        timeout: .seconds(600),
                        cancellationToken: request.token
                    ) { _ in }
                    Issue.record("the request completed")
                } catch {
                    #expect(error is CancellationError)
                }
                return Task.isCancelled
            }
            #expect(await server.waitUntil { $0.requests == 1 })
            request.cancel()
            let callerCancelled = await call.value
            #expect(!callerCancelled)
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("cancelling the calling task cancels the request, with CancellationError, the token untouched")
    func callerCancellationReachesTheRequest() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let call = Task {
                try await client.client.execute(
                    HTTPClientRequest(url: server.url("/slow-head?ms=600000")),
                    timeout: .seconds(600),
                    cancellationToken: request.token
                ) { _ in Issue.record("the handler ran") }
            }
            #expect(await server.waitUntil { $0.requests == 1 })
            call.cancel()
            await #expect(throws: CancellationError.self) { try await call.value }
            #expect(!request.token.isCancellationRequested)
            #expect(handlerCount(request.token) == 0)
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("racing completion and cancellation: the value or CancellationError, and no handler left on the token")
    func raceReturnsOnce() async throws {
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
                // 0: cancelled from another thread right after the call starts; 1: when the server reads the
                // request; 2: after the call returned.
                let mode = index % 3
                if mode == 1 { current.withLockedValue { $0 = request } }
                let call = Task {
                    try await client.client.execute(
                        HTTPClientRequest(url: server.url("/fast")),
                        timeout: .seconds(600),
                        cancellationToken: request.token
                    ) { response in try await response.body.collect(upTo: 1024) }
                }
                if mode == 0 { DispatchQueue.global().async { request.cancel() } }
                let result = await call.result
                if mode == 2 { request.cancel() }  // too late: the value stays
                current.withLockedValue { $0 = nil }
                switch result {
                case .success(let body):
                    #expect(body == ByteBuffer(string: "ok"))
                    responses += 1
                case .failure(let error):
                    #expect(error is CancellationError, "\(error)")
                    #expect(mode != 2)
                    cancellations += 1
                }
                #expect(handlerCount(request.token) == 0)
            }
            #expect(responses + cancellations == iterations)
            #expect(await server.waitUntil { $0.open <= 8 })  // at most the pool's idle connections remain
        }
    }

    @Test("no leaked connections after many cancelled requests, and nothing left on a long-lived token")
    func noLeaksAfterManyCancelledRequests() async throws {
        let count = Int(Environment.value("FUTURELIB_HTTP_CANCELLED_REQUESTS") ?? "") ?? 3_000
        // Requests in flight, by the id in their query, cancelled from another thread when the server reads them.
        let inFlight = NIOLockedValueBox<[Int: CancellationRequest]>([:])
        let onEvent: @Sendable (LoopbackHTTPServer.Event) -> Void = { event in
            guard case .request(_, let uri) = event, let id = Int(uri.split(separator: "id=").last ?? ""),
                let request = inFlight.withLockedValue({ $0.removeValue(forKey: id) })
            else { return }
            DispatchQueue.global().async { request.cancel() }
        }
        let shutdown = CancellationRequest()  // long-lived, as a server's: must not collect a handler per request
        try await withServerAndClient(connectionsPerHost: 64, onEvent: onEvent) { server, client in
            var id = 0
            while id < count {
                let batch = min(64, count - id)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<batch {
                        id += 1
                        let request = CancellationRequest(linkedTo: [shutdown.token])
                        // 0: cancelled at once (queued or connecting); 1: waiting for the head; 2: in the body.
                        let phase = id % 3
                        if phase != 0 { inFlight.withLockedValue { $0[id] = request } }
                        let path = phase == 2 ? "/slow-body?chunks=1000&ms=50" : "/slow-head?ms=600000"
                        let url = server.url("\(path)&id=\(id)")
                        group.addTask {
                            await #expect(throws: CancellationError.self) {
                                try await client.client.execute(
                                    HTTPClientRequest(url: url),
                                    timeout: .seconds(600),
                                    cancellationToken: request.token
                                ) { response in try await response.body.collect(upTo: 1 << 30) }
                            }
                        }
                        if phase == 0 { request.cancel() }
                    }
                    try await group.waitForAll()
                }
            }
            // Every request that reached the server was cut short: its connection closed early.
            #expect(await server.waitUntil { $0.closedEarly == $0.requests })
            #expect(server.current.responsesCompleted == 0)
        }
        #expect(handlerCount(shutdown.token) == 0)
    }

    @Test("a body that the handler leaves unread is cancelled when it returns: the server sees the connection close")
    func unreadBodyClosesTheConnection() async throws {
        try await withServerAndClient { server, client in
            let shutdown = CancellationRequest()
            let status = try await client.client.execute(
                HTTPClientRequest(url: server.url("/slow-body?chunks=100000&ms=20")),
                timeout: .seconds(600),
                cancellationToken: shutdown.token
            ) { response in response.status }
            #expect(status == .ok)
            #expect(handlerCount(shutdown.token) == 0)
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("back-pressure: while the handler does not pull, the server stalls instead of sending the whole body")
    func backPressure() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let chunks = 16_384  // 1 GiB in 64 KiB chunks: far more than the socket buffers hold
            await #expect(throws: CancellationError.self) {
                try await client.client.execute(
                    HTTPClientRequest(url: server.url("/big-body?chunks=\(chunks)")),
                    timeout: .seconds(600),
                    cancellationToken: request.token
                ) { response in
                    var iterator = response.body.makeAsyncIterator()
                    #expect(try await iterator.next() != nil)
                    // The handler reads no further: the connection's buffers fill and the server must wait.
                    #expect(await server.waitUntil { $0.stalls >= 1 })
                    #expect(server.current.chunksSent < chunks / 4)
                    request.cancel()
                    while try await iterator.next() != nil {}
                }
            }
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("a long body arrives whole and in order")
    func longBodyArrivesWhole() async throws {
        try await withServerAndClient { server, client in
            let bytes = try await client.client.execute(
                HTTPClientRequest(url: server.url("/big-body?chunks=64")),
                timeout: .seconds(600),
                cancellationToken: CancellationRequest().token
            ) { response in
                var count = 0
                for try await part in response.body {
                    #expect(part.readableBytesView.allSatisfy { $0 == UInt8(ascii: "x") })
                    count += part.readableBytes
                }
                return count
            }
            #expect(bytes == 64 * 64 * 1024)
            #expect(server.current.closedEarly == 0)
        }
    }

    @Test("a request with a body: cancelling while waiting for the head throws CancellationError and closes it")
    func requestWithABodyIsCancelled() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            var post = HTTPClientRequest(url: server.url("/slow-head?ms=600000"))
            post.method = .POST
            post.body = .bytes(ByteBuffer(string: "payload"))
            let call = Task {
                try await client.client.execute(post, timeout: .seconds(600), cancellationToken: request.token) { _ in
                    Issue.record("the handler ran")
                }
            }
            #expect(await server.waitUntil { $0.requests == 1 })
            request.cancel()
            await #expect(throws: CancellationError.self) { try await call.value }
            #expect(handlerCount(request.token) == 0)
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("a redirect cycle throws HTTPClientError.redirectCycleDetected, and nothing left on the token")
    func redirectCycle() async throws {
        try await withServerAndClient { server, client in
            let shutdown = CancellationRequest()
            // AsyncHTTPClient fails only the task on a redirect cycle, never the delegate.
            let error = await errorThrown {
                try await client.client.execute(
                    HTTPClientRequest(url: server.url("/redirect-self")),
                    timeout: .seconds(600),
                    cancellationToken: shutdown.token
                ) { _ in Issue.record("the handler ran") } as Void
            }
            #expect(error as? HTTPClientError == .redirectCycleDetected)
            #expect(handlerCount(shutdown.token) == 0)
        }
    }

    @Test("cancelled after a redirect, waiting for the redirected head: CancellationError, the connection closed")
    func cancelledAfterARedirect() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let call = Task {
                try await client.client.execute(
                    HTTPClientRequest(url: server.url("/redirect-hang")),
                    timeout: .seconds(600),
                    cancellationToken: request.token
                ) { _ in Issue.record("the handler ran") }
            }
            #expect(await server.waitUntil { $0.requests == 2 })
            request.cancel()
            await #expect(throws: CancellationError.self) { try await call.value }
            #expect(handlerCount(request.token) == 0)
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("a body left unread when the whole response has arrived: the request ends and releases its delegate")
    func unreadBodyAtItsEndIsReleased() async throws {
        try await withServerAndClient { server, client in
            let shutdown = CancellationRequest()
            // Unique to this test: the delegates alive are counted by URL.
            let url = server.url("/burst?chunks=40&test=\(UInt32.random(in: 0...UInt32.max))")
            let status = try await client.client.execute(
                HTTPClientRequest(url: url),
                timeout: .seconds(600),
                cancellationToken: shutdown.token
            ) { response in
                // The server has sent everything: AsyncHTTPClient holds the parts past the delegate's and the end.
                #expect(await server.waitUntil { $0.responsesCompleted == 1 })
                return response.status
            }
            #expect(status == .ok)
            #expect(handlerCount(shutdown.token) == 0)
            let released = await waitUntil(limit: loadScaled(.seconds(60))) {
                StreamedResponseDelegate.live.withLockedValue { $0[url] == nil }
            }
            #expect(released, "the request's delegate is still alive: the request never ended")
        }
    }

    @Test("the token reaches the closure only through the body it reads: its task is not cancelled")
    func tokenReachesTheClosureThroughTheBody() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            await #expect(throws: CancellationError.self) {
                try await client.client.execute(
                    HTTPClientRequest(url: server.url("/slow-body?chunks=100000&ms=20")),
                    timeout: .seconds(600),
                    cancellationToken: request.token
                ) { response in
                    request.cancel()  // while the closure is not reading the body
                    #expect(!Task.isCancelled)
                    try await Task.sleep(for: .milliseconds(1))  // not interrupted
                    for try await _ in response.body {}  // the read fails
                    Issue.record("the body was read to its end")
                }
            }
            #expect(handlerCount(request.token) == 0)
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("a client that is shut down: AsyncHTTPClient's error, and nothing left on the token")
    func shutDownClient() async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        try await client.shutdown()
        let shutdown = CancellationRequest()
        await #expect(throws: HTTPClientError.alreadyShutdown) {
            try await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:9/"),
                timeout: .seconds(600),
                cancellationToken: shutdown.token
            ) { _ in Issue.record("the handler ran") }
        }
        #expect(handlerCount(shutdown.token) == 0)
    }
}

/// The handlers registered on `token`, read from its debug description (the count is not public); none once it is
/// cancelled (its handlers ran or were dropped).
func handlerCount(_ token: CancellationToken) -> Int? {
    let description = String(reflecting: token)
    if description.hasSuffix("(cancelled)") { return 0 }
    // "CancellationToken(active; 2 handlers registered; …)": the number is the second word after the "(".
    let words = description.split(separator: " ")
    guard words.count > 2, words[2].hasPrefix("handler") else { return nil }
    return Int(words[1])
}
