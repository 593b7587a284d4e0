// The loopback server and client every test of this target runs against, and the checks made when they stop.
import AsyncHTTPClient
import FutureLib
import FutureLibAsyncHTTPClient
import IntegrationsTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` with a fresh loopback server and a client on the same loops, then shuts both down.
///
/// A cancelled request's future fails at once, while AsyncHTTPClient's task behind it ends a little later: the
/// loops are shut down only once every future is released (its task has ended), or NIO would trap on promises
/// left on a loop that shut down. That wait is also the check that nothing keeps the futures alive.
func withServerAndClient(
    connectionsPerHost: Int = 8,
    onEvent: (@Sendable (LoopbackHTTPServer.Event) -> Void)? = nil,
    _ body: (LoopbackHTTPServer, TrackingClient) async throws -> Void
) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let server = try await LoopbackHTTPServer.start(on: group, onEvent: onEvent)
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionsPerHost
    let client = TrackingClient(HTTPClient(eventLoopGroup: group, configuration: configuration))
    var failure: (any Error)?
    do { try await body(server, client) } catch { failure = error }
    let released = await client.waitUntilLive(atMost: 0)
    try await client.client.shutdown()
    // Idle pooled connections close with the client; nothing else may stay open.
    #expect(await server.waitUntil { $0.open == 0 }, "connections left open: \(server.current)")
    try await server.shutdown()
    try await group.shutdownGracefully()
    if let failure { throw failure }
    #expect(released, "a request's future is still alive after its request ended")
}

/// An `HTTPClient` that keeps weak references to the futures it returns.
final class TrackingClient: Sendable {
    private final class Weak: Sendable {
        // Sendable: written once in `init`, before the box is shared; reading a weak reference is thread-safe.
        nonisolated(unsafe) weak var future: Future<HTTPClientResponse>?
        init(_ future: Future<HTTPClientResponse>) { self.future = future }
    }

    let client: HTTPClient
    private let references = NIOLockedValueBox<[Weak]>([])

    init(_ client: HTTPClient) {
        self.client = client
    }

    /// `HTTPClient.execute(_:timeout:upTo:cancellationToken:)` of a GET, tracked.
    func execute(_ url: String, upTo maxBytes: Int, cancellationToken: CancellationToken) -> Future<HTTPClientResponse>
    {
        let future = client.execute(
            HTTPClientRequest(url: url),
            timeout: .seconds(600),
            upTo: maxBytes,
            cancellationToken: cancellationToken
        )
        references.withLockedValue { $0.append(Weak(future)) }
        return future
    }

    /// `HTTPClient.execute(_:timeout:cancellationToken:)` (the streaming form) of a GET, tracked.
    func stream(_ url: String, cancellationToken: CancellationToken) -> Future<HTTPClientResponse> {
        let future = client.execute(
            HTTPClientRequest(url: url),
            timeout: .seconds(600),
            cancellationToken: cancellationToken
        )
        references.withLockedValue { $0.append(Weak(future)) }
        return future
    }

    /// Waits (generously: the tasks behind the futures end on their own threads) until at most `limit` of the
    /// futures are still alive.
    func waitUntilLive(atMost limit: Int) async -> Bool {
        for _ in 0..<6000 {
            if references.withLockedValue({ $0.count { $0.future != nil } }) <= limit { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}

/// The process environment, without Foundation.
enum Environment {
    static func value(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}

/// The error that `operation` throws (`nil` if it returns), waiting for it at most a load-scaled minute: an
/// operation still running then is recorded as a hang, and `nil` returned.
func errorThrown(by operation: @escaping @Sendable () async throws -> Void) async -> (any Error)? {
    let outcome = NIOLockedValueBox<Result<Void, any Error>?>(nil)
    Task {
        let result: Result<Void, any Error>
        do {
            try await operation()
            result = .success(())
        } catch {
            result = .failure(error)
        }
        outcome.withLockedValue { $0 = result }
    }
    guard await waitUntil(limit: loadScaled(.seconds(60)), { outcome.withLockedValue { $0 != nil } }) else {
        Issue.record("still running after a load-scaled minute: a hang")
        return nil
    }
    guard case .failure(let error) = outcome.withLockedValue({ $0 }) else { return nil }
    return error
}
