public import AsyncHTTPClient
public import NIOCore
import NIOHTTP1

// What the server tests (Hummingbird, Vapor) drive their applications with besides raw sockets: an AsyncHTTPClient
// that keeps one connection, and a way for a raw client to leave.

extension HTTPClient {
    /// A client with one connection per host at most, so that its requests share one keep-alive connection.
    ///
    /// - Parameter group: The loops the client runs on.
    /// - Returns: The client; shut it down when done.
    public static func keepingOneConnection(on group: any EventLoopGroup) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1
        return HTTPClient(eventLoopGroup: group, configuration: configuration)
    }

    /// Runs `body` with this client, then shuts the client down, also when `body` throws: a client still running when
    /// its event loop group shuts down crashes the process (SwiftNIO's leaked-promise trap), which would hide the
    /// error that ended `body`.
    ///
    /// - Parameter body: What to do with the client.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or what shutting the client down throws.
    public func shuttingDown<Result: Sendable>(after body: (HTTPClient) async throws -> Result) async throws -> Result {
        let result: Result
        do {
            result = try await body(self)
        } catch {
            try? await shutdown()
            throw error
        }
        try await shutdown()
        return result
    }

    /// Sends `count` `GET` requests to `url`, one after another.
    ///
    /// - Parameters:
    ///   - count: How many.
    ///   - url: Where to.
    /// - Returns: The bodies of the requests answered `200` (a route that answers its connection's identity gives
    ///   one body per connection used), and how many failed or were answered otherwise.
    public func getOneAfterAnother(_ count: Int, from url: String) async -> (bodies: Set<String>, failures: Int) {
        var failures = 0
        var bodies = Set<String>()
        for _ in 0..<count {
            do {
                let response = try await execute(HTTPClientRequest(url: url), timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1024)
                if response.status == .ok { bodies.insert(String(buffer: body)) } else { failures += 1 }
            } catch {
                failures += 1
            }
        }
        return (bodies, failures)
    }
}

/// How a client leaves in the middle of a request: it closes its connection, or only its sending side (a
/// half-close).
public enum Disconnect: Sendable, CustomStringConvertible {
    /// The client closes its connection.
    case close
    /// The client closes its sending side (reads end-of-file on the server).
    case halfClose

    /// `close` or `half-close`.
    public var description: String { self == .close ? "close" : "half-close" }
}

extension RawHTTPClient {
    /// Leaves as `disconnect` says.
    ///
    /// - Parameter disconnect: Close, or half-close.
    /// - Throws: NIO's error when closing fails.
    public func leave(_ disconnect: Disconnect) async throws {
        switch disconnect {
        case .close: try await channel.close()
        case .halfClose: try await channel.close(mode: .output)
        }
    }
}
