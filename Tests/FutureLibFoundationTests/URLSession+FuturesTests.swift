import Foundation
import FutureLib
import FutureLibFoundation
import HTTPFixture
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Real requests over loopback sockets to `HTTPFixture`; no mocks. Deadlines are generous and
/// only bound a failure: no test asserts on how long something took.
@Suite(.timeLimit(.minutes(3)))
struct URLSessionFuturesTests {
    let server: HTTPFixture
    let session: URLSession

    init() throws {
        server = try HTTPFixture()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.connectionProxyDictionary = [:]  // loopback only, whatever the environment says
        // Tokens end these requests, never URLSession's own idle timeout (60 s by default): the
        // server holds a `/slow` request for ten minutes, and under a sanitizer on a small machine a
        // test's task can wait longer than a minute for a cooperative thread before it checks one.
        configuration.timeoutIntervalForRequest = 600
        session = URLSession(configuration: configuration)
    }

    /// Ends the session and the server (Swift Testing has no `deinit` hook for a suite struct).
    private func finish() {
        session.invalidateAndCancel()
        server.stop()
    }

    @Test("data(for:cancellationToken:) completes with the body and the response")
    func dataSucceeds() async throws {
        defer { finish() }
        let request = CancellationRequest()
        let future = session.data(
            for: URLRequest(url: server.url("/now?size=1000&id=ok")),
            cancellationToken: request.token
        )
        let (data, response) = try await future.value()
        #expect(data.count == 1000)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(server.request(id: "ok")?.outcome == .completed)
    }

    @Test("data(from:cancellationToken:) reads a chunked reply to its end")
    func dataFromURLReadsChunkedBody() async throws {
        defer { finish() }
        let future = session.data(
            from: server.url("/stream?chunks=5&interval=1&size=10&id=chunked"),
            cancellationToken: .none
        )
        let (data, _) = try await future.value()
        #expect(data == Data(repeating: UInt8(ascii: "x"), count: 50))
    }

    @Test("a token cancelled before the start fails at once and sends nothing")
    func cancelledBeforeStart() async throws {
        defer { finish() }
        let future = session.data(from: server.url("/now?id=never"), cancellationToken: .cancelled)
        #expect(future.isCompleted)
        await #expect(throws: CancellationError.self) { try await future.value() }
        // A later request on the same session arrives; the cancelled one never does.
        _ = try await session.data(from: server.url("/now?id=after"), cancellationToken: .none).value()
        #expect(server.request(id: "never") == nil)
        #expect(server.requests.count == 1)
    }

    @Test("cancelled during the response body: CancellationError, and the server sees the connection close")
    func cancelledDuringBody() async throws {
        defer { finish() }
        let request = CancellationRequest()
        let future = session.data(
            from: server.url("/stream?chunks=10000&interval=10&id=body"),
            cancellationToken: request.token
        )
        #expect(await server.eventually(id: "body") { $0.chunksSent >= 2 })
        request.cancel()
        #expect(future.isCompleted)  // at once, on the cancelling thread
        await #expect(throws: CancellationError.self) { try await future.value() }
        #expect(await server.eventually(id: "body") { $0.outcome == .clientClosedEarly })
    }

    @Test("a timer (CancellationRequest(cancelAfter:)) fails a slow request with CancellationError")
    func timerCancelsSlowRequest() async throws {
        defer { finish() }
        let deadline = CancellationRequest(cancelAfter: .milliseconds(100))
        let future = session.data(from: server.url("/slow?delay=600000&id=slow"), cancellationToken: deadline.token)
        await #expect(throws: CancellationError.self) { try await future.value() }
        // Whether the request reached the server before the timer fired depends on the machine;
        // the next test arms the timer once it has.
    }

    @Test("a timer armed while the server waits cancels the request, and the server sees the close")
    func timerCancelsRequestInFlight() async throws {
        defer { finish() }
        let deadline = CancellationRequest()
        let future = session.data(from: server.url("/slow?delay=600000&id=armed"), cancellationToken: deadline.token)
        #expect(await server.eventually(id: "armed") { $0.outcome == .inProgress })
        deadline.cancel(after: .milliseconds(50))
        await #expect(throws: CancellationError.self) { try await future.value() }
        #expect(await server.eventually(id: "armed") { $0.outcome == .clientClosedEarly })
    }

    @Test("cancelling after completion has no effect")
    func cancelAfterCompletion() async throws {
        defer { finish() }
        let request = CancellationRequest()
        let future = session.data(from: server.url("/now?size=3&id=done"), cancellationToken: request.token)
        let (data, _) = try await future.value()
        request.cancel()
        guard case .success(let (again, _)) = future.result else {
            Issue.record("the result changed: \(String(describing: future.result))")
            return
        }
        #expect(again == data)
        #expect(server.request(id: "done")?.outcome == .completed)
    }

    @Test("download(for:cancellationToken:) moves the file to a location the caller owns")
    func downloadSucceeds() async throws {
        defer { finish() }
        let future = session.download(
            for: URLRequest(url: server.url("/now?size=5000&id=file")),
            cancellationToken: CancellationRequest().token
        )
        let (file, response) = try await future.value()
        defer { try? FileManager.default.removeItem(at: file) }
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try Data(contentsOf: file).count == 5000)
    }

    @Test("a download cancelled during the body fails with CancellationError")
    func downloadCancelledDuringBody() async throws {
        defer { finish() }
        let request = CancellationRequest()
        let future = session.download(
            for: URLRequest(url: server.url("/stream?chunks=10000&interval=10&id=dl")),
            cancellationToken: request.token
        )
        #expect(await server.eventually(id: "dl") { $0.chunksSent >= 2 })
        request.cancel()
        await #expect(throws: CancellationError.self) { try await future.value() }
        #expect(await server.eventually(id: "dl") { $0.outcome == .clientClosedEarly })
    }
}
