import AsyncHTTPClient
import Dispatch
import FutureLib
import FutureLibAsyncHTTPClient
import IntegrationsTestSupport
import NIOCore
import NIOHTTP1
import Testing

/// The streaming form: a future of the head, and a body that the token still cancels while it streams.
@Suite(.timeLimit(.minutes(5)))
struct HTTPClientStreamingFutureTests {
    @Test("the future completes with the head; the body streams to its end")
    func streamsToTheEnd() async throws {
        try await withServerAndClient { server, client in
            let response = try await client.stream(
                server.url("/slow-body?chunks=5&ms=1"),
                cancellationToken: CancellationRequest().token
            ).value()
            #expect(response.status == .ok)
            var bytes = 0
            for try await chunk in response.body { bytes += chunk.readableBytes }
            #expect(bytes == 5 * 16)
            #expect(server.current.responsesCompleted == 1)
            #expect(server.current.closedEarly == 0)
        }
    }

    @Test("waiting for the head: cancelling fails the future with CancellationError and closes the connection")
    func cancelWhileWaitingForTheHead() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let future = client.stream(server.url("/slow-head?ms=600000"), cancellationToken: request.token)
            #expect(await server.waitUntil { $0.requests == 1 })
            request.cancel()
            #expect(future.isCompleted)
            await #expect(throws: CancellationError.self) { try await future.value() }
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("while the body streams: the token ends the iteration with CancellationError and closes the connection")
    func cancelWhilePulling() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let response = try await client.stream(
                server.url("/slow-body?chunks=100000&ms=20"),
                cancellationToken: request.token
            ).value()
            await #expect(throws: CancellationError.self) {
                var chunks = 0
                for try await _ in response.body {
                    chunks += 1
                    if chunks == 2 { DispatchQueue.global().async { request.cancel() } }  // during a later pull
                }
            }
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
            #expect(server.current.responsesCompleted == 0)
        }
    }

    @Test("while nobody pulls: the token closes the connection at once, and the next pull throws CancellationError")
    func cancelBetweenPulls() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let response = try await client.stream(
                server.url("/slow-body?chunks=100000&ms=20"),
                cancellationToken: request.token
            ).value()
            var iterator = response.body.makeAsyncIterator()
            #expect(try await iterator.next() != nil)
            request.cancel()
            // Nothing pulls now, yet the request is cancelled and its connection closed.
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
            await #expect(throws: CancellationError.self) { _ = try await iterator.next() }
        }
    }

    @Test("before the first pull: the token closes the connection at once, and the first pull throws")
    func cancelBeforeTheFirstPull() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let response = try await client.stream(
                server.url("/slow-body?chunks=100000&ms=20"),
                cancellationToken: request.token
            ).value()
            request.cancel()
            // No iterator yet, yet the request is cancelled and its connection closed.
            #expect(await server.waitUntil(limit: .seconds(10)) { $0.closedEarly == 1 && $0.open == 0 })
            var iterator = response.body.makeAsyncIterator()
            await #expect(throws: CancellationError.self) { _ = try await iterator.next() }
        }
    }

    @Test("dropping the response before the body's end closes the connection")
    func droppingTheResponseClosesTheConnection() async throws {
        try await withServerAndClient { server, client in
            do {
                let response = try await client.stream(
                    server.url("/slow-body?chunks=100000&ms=20"),
                    cancellationToken: CancellationRequest().token
                ).value()
                var iterator = response.body.makeAsyncIterator()
                #expect(try await iterator.next() != nil)
            }
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }

    @Test("back-pressure: while nobody pulls, the server stalls instead of sending the whole body")
    func backPressure() async throws {
        try await withServerAndClient { server, client in
            let request = CancellationRequest()
            let chunks = 16_384  // 1 GiB in 64 KiB chunks: far more than the socket buffers hold
            let response = try await client.stream(
                server.url("/big-body?chunks=\(chunks)"),
                cancellationToken: request.token
            )
            .value()
            var iterator = response.body.makeAsyncIterator()
            #expect(try await iterator.next() != nil)
            // The client reads no further: the connection's buffers fill and the server must wait.
            #expect(await server.waitUntil { $0.stalls >= 1 })
            #expect(server.current.chunksSent < chunks / 4)
            request.cancel()
            await #expect(throws: CancellationError.self) { _ = try await iterator.next() }
            #expect(await server.waitUntil { $0.closedEarly == 1 && $0.open == 0 })
        }
    }
}
