import NIOConcurrencyHelpers
public import NIOCore
import NIOPosix

/// An HTTP client on a raw NIO socket, so that a test can close the connection (or its sending side) in the middle
/// of a request, as a browser or `curl` giving up does. The Hummingbird and Vapor tests and the soaks share it.
public final class RawHTTPClient: Sendable {
    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let received: NIOLockedValueBox<String>
        init(_ received: NIOLockedValueBox<String>) { self.received = received }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let text = String(buffer: unwrapInboundIn(data))
            received.withLockedValue { $0 += text }
        }
    }

    /// The connection: close it (`close()`, or `close(mode: .output)` for a half-close) to leave.
    public let channel: any Channel
    private let received: NIOLockedValueBox<String>

    private init(channel: any Channel, received: NIOLockedValueBox<String>) {
        self.channel = channel
        self.received = received
    }

    /// Connects to `port` on 127.0.0.1.
    ///
    /// - Parameters:
    ///   - port: The server's port.
    ///   - group: The loops the connection runs on.
    /// - Returns: The connected client.
    /// - Throws: NIO's error when the connection fails.
    public static func connect(port: Int, group: any EventLoopGroup) async throws -> RawHTTPClient {
        try await connect(group: group) { $0.connect(host: "127.0.0.1", port: port) }
    }

    /// Connects to the Unix domain socket at `path`.
    ///
    /// - Parameters:
    ///   - path: The socket's path.
    ///   - group: The loops the connection runs on.
    /// - Returns: The connected client.
    /// - Throws: NIO's error when the connection fails.
    public static func connect(
        unixDomainSocketPath path: String,
        group: any EventLoopGroup
    ) async throws
        -> RawHTTPClient
    {
        try await connect(group: group) { $0.connect(unixDomainSocketPath: path) }
    }

    private static func connect(
        group: any EventLoopGroup,
        _ connect: (ClientBootstrap) -> EventLoopFuture<any Channel>
    ) async throws -> RawHTTPClient {
        let received = NIOLockedValueBox("")
        // Without remote half-closure: the server's end of the connection closes the client's channel.
        let bootstrap = ClientBootstrap(group: group).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(Collector(received))
            }
        }
        return RawHTTPClient(channel: try await connect(bootstrap).get(), received: received)
    }

    /// Sends `GET path` (HTTP/1.1, keep-alive).
    ///
    /// - Parameter path: The request target, such as `/fast`.
    /// - Throws: NIO's error when the write fails.
    public func get(_ path: String) async throws {
        let text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: text)).get()
    }

    /// Everything received so far.
    public var text: String { received.withLockedValue { $0 } }

    /// Waits until `condition` holds for what was received, or `limit` passes.
    ///
    /// - Parameters:
    ///   - limit: How long to wait at most; generous, since the machine may be loaded.
    ///   - condition: What to wait for.
    /// - Returns: Whether `condition` held before the limit.
    public func waitUntilReceived(limit: Duration = .seconds(60), _ condition: (String) -> Bool) async -> Bool {
        await waitUntil(limit: limit) { condition(text) }
    }
}
