import NIOConcurrencyHelpers
// A small HTTP/1.1 server on 127.0.0.1 for the integration tests and the demo: real sockets, no mocks. It serves
// six endpoints whose timing puts a client in each phase of a request, and it counts the connections it sees
// open and close, so that a test can check that a cancelled request really closed its connection.
import NIOCore
import NIOHTTP1
public import NIOPosix

/// A loopback HTTP/1.1 server with eight endpoints and connection counters.
///
/// - `GET /fast` (and any path not listed here): `200` with the body `ok` at once.
/// - `GET /slow-head?ms=N`: the response head (and body `ok`) only after `N` milliseconds.
/// - `GET /slow-body?chunks=N&ms=M`: the head at once, then `N` chunks of 16 bytes, one every `M` milliseconds.
/// - `GET /status/N/…`: status `N` with the body `status N`, whatever follows (a service that answers an error).
/// - `GET /hang/…`: no answer for a minute, whatever follows (a service that hangs).
/// - `GET /big-body?chunks=N`: the head at once, then `N` chunks of 64 KiB, as fast as the connection takes them:
///   when the client stops reading and the socket's buffers fill, the server waits (a stall), as servers do.
/// - `GET /burst?chunks=N`: the head, then `N` chunks of 16 bytes and the end in one flush.
/// - `GET /redirect-self`: `302` to itself, a redirect cycle. `GET /redirect-hang`: `302` to `/hang/redirected`.
///
/// A connection that closes while a response is still pending or streaming is counted as closed early, and
/// reported to `onEvent`.
public final class LoopbackHTTPServer: Sendable {
    /// What the server has seen so far.
    public struct Statistics: Sendable, Equatable {
        /// Connections accepted.
        public var accepted = 0
        /// Connections closed (by either side).
        public var closed = 0
        /// Connections closed while a response was pending or streaming (the client gave up).
        public var closedEarly = 0
        /// Request heads received.
        public var requests = 0
        /// Responses written to their end.
        public var responsesCompleted = 0
        /// Body chunks written by `/slow-body` and `/big-body`.
        public var chunksSent = 0
        /// Times `/big-body` found the connection not writable (the client was not reading) and waited.
        public var stalls = 0

        /// Connections open now.
        public var open: Int { accepted - closed }
    }

    /// What happened, for the demo's log.
    public enum Event: Sendable {
        /// A request head arrived on connection `connection`.
        case request(connection: Int, uri: String)
        /// Connection `connection` closed before its response for `uri` was complete.
        case closedEarly(connection: Int, uri: String)
    }

    /// The port the server listens on (on 127.0.0.1).
    public let port: Int

    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let ownsGroup: Bool
    private let statistics: NIOLockedValueBox<Statistics>

    private init(
        channel: any Channel,
        group: MultiThreadedEventLoopGroup,
        ownsGroup: Bool,
        statistics: NIOLockedValueBox<Statistics>
    ) {
        self.channel = channel
        self.group = group
        self.ownsGroup = ownsGroup
        self.statistics = statistics
        self.port = channel.localAddress?.port ?? 0
    }

    /// Starts a server on 127.0.0.1 on a free port.
    ///
    /// - Parameters:
    ///   - group: The loops to serve on; by default a group of one thread of its own, shut down by ``shutdown()``.
    ///   - onEvent: Called on a loop thread for each request and each early close.
    /// - Returns: The running server.
    /// - Throws: NIO's error when the socket cannot be bound.
    public static func start(
        on group: MultiThreadedEventLoopGroup? = nil,
        onEvent: (@Sendable (Event) -> Void)? = nil
    ) async throws -> LoopbackHTTPServer {
        let loops = group ?? MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let statistics = NIOLockedValueBox(Statistics())
        let connectionNumbers = NIOLockedValueBox(0)
        let channel = try await ServerBootstrap(group: loops)
            .serverChannelOption(.backlog, value: 512)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let number = connectionNumbers.withLockedValue { number in
                    number += 1
                    return number
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        EndpointHandler(connection: number, statistics: statistics, onEvent: onEvent)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return LoopbackHTTPServer(channel: channel, group: loops, ownsGroup: group == nil, statistics: statistics)
    }

    /// `http://127.0.0.1:<port>` followed by `path`.
    ///
    /// - Parameter path: The path and query, starting with `/`.
    /// - Returns: The URL string.
    public func url(_ path: String) -> String {
        "http://127.0.0.1:\(port)\(path)"
    }

    /// A snapshot of the counters.
    public var current: Statistics {
        statistics.withLockedValue { $0 }
    }

    /// Waits (polling every few milliseconds) until `condition` holds for the counters, or `limit` passes.
    ///
    /// - Parameters:
    ///   - limit: How long to wait at most; generous, since the machine may be loaded.
    ///   - condition: What to wait for.
    /// - Returns: Whether `condition` held before the limit.
    @discardableResult
    public func waitUntil(
        limit: Duration = .seconds(60),
        _ condition: @Sendable (Statistics) -> Bool
    ) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + limit
        while clock.now < end {
            if condition(current) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition(current)
    }

    /// Closes the listening socket (and the loops, if the server made them).
    ///
    /// - Throws: NIO's error when closing fails.
    public func shutdown() async throws {
        try await channel.close()
        if ownsGroup { try await group.shutdownGracefully() }
    }
}

/// One connection: answers each request according to its path.
private final class EndpointHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let connection: Int
    private let statistics: NIOLockedValueBox<LoopbackHTTPServer.Statistics>
    private let onEvent: (@Sendable (LoopbackHTTPServer.Event) -> Void)?
    /// The request being answered, until its response is complete.
    private var pendingURI: String?
    private var timer: Scheduled<Void>?
    /// The `/big-body` chunks still to write, while it waits for the connection to become writable.
    private var bigChunksLeft = 0
    /// Set when the connection closes: a write that fails closes it inside `writeAndFlush`, and the response being
    /// written must stop there, not go on (and count as completed) on a closed connection.
    private var isClosed = false

    init(
        connection: Int,
        statistics: NIOLockedValueBox<LoopbackHTTPServer.Statistics>,
        onEvent: (@Sendable (LoopbackHTTPServer.Event) -> Void)?
    ) {
        self.connection = connection
        self.statistics = statistics
        self.onEvent = onEvent
    }

    func channelActive(context: ChannelHandlerContext) {
        statistics.withLockedValue { $0.accepted += 1 }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        timer?.cancel()
        timer = nil
        bigChunksLeft = 0
        let early = pendingURI
        statistics.withLockedValue {
            $0.closed += 1
            if early != nil { $0.closedEarly += 1 }
        }
        if let early { onEvent?(.closedEarly(connection: connection, uri: early)) }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        pendingURI = head.uri
        statistics.withLockedValue { $0.requests += 1 }
        onEvent?(.request(connection: connection, uri: head.uri))
        let (path, query) = Self.split(head.uri)
        switch path {
        case "/slow-head":
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(query["ms"] ?? 1000))) {
                self.respond(context: context, body: "ok")
            }
        case "/big-body":
            writeHead(context: context, contentLength: nil)
            bigChunksLeft = query["chunks"] ?? 16
            writeBigChunks(context: context)
        case "/slow-body":
            writeHead(context: context, contentLength: nil)
            streamChunks(
                context: context,
                left: query["chunks"] ?? 10,
                interval: .milliseconds(Int64(query["ms"] ?? 100))
            )
        case "/redirect-self", "/redirect-hang":
            // A redirect to itself (AsyncHTTPClient fails the request with `redirectCycleDetected`), or to `/hang/`.
            var headers = HTTPHeaders()
            headers.add(name: "location", value: path == "/redirect-self" ? head.uri : "/hang/redirected")
            headers.add(name: "content-length", value: "0")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .found, headers: headers))),
                promise: nil
            )
            end(context: context)
        case "/burst":
            // `chunks` small chunks and the end in one flush: the client receives them all at once.
            writeHead(context: context, contentLength: nil)
            for _ in 0..<(query["chunks"] ?? 10) {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "0123456789abcdef")))), promise: nil)
                statistics.withLockedValue { $0.chunksSent += 1 }
            }
            end(context: context)
        case _ where path.hasPrefix("/hang/"):
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(60)) {
                self.respond(context: context, body: "ok")
            }
        case _ where path.hasPrefix("/status/"):
            let code = Int(path.split(separator: "/")[1]) ?? 500
            respond(context: context, status: .init(statusCode: code), body: "status \(code)")
        default:
            respond(context: context, body: "ok")
        }
    }

    private func writeHead(context: ChannelHandlerContext, status: HTTPResponseStatus = .ok, contentLength: Int?) {
        var headers = HTTPHeaders()
        if let contentLength { headers.add(name: "content-length", value: "\(contentLength)") }
        context.writeAndFlush(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
            promise: nil
        )
    }

    private func respond(context: ChannelHandlerContext, status: HTTPResponseStatus = .ok, body: String) {
        writeHead(context: context, status: status, contentLength: body.utf8.count)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        end(context: context)
    }

    private func streamChunks(context: ChannelHandlerContext, left: Int, interval: TimeAmount) {
        guard !isClosed else { return }
        guard left > 0 else {
            end(context: context)
            return
        }
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "0123456789abcdef")))), promise: nil)
        statistics.withLockedValue { $0.chunksSent += 1 }
        guard !isClosed else { return }  // the write failed and closed the connection
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: interval) {
            self.streamChunks(context: context, left: left - 1, interval: interval)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, bigChunksLeft > 0 { writeBigChunks(context: context) }
        context.fireChannelWritabilityChanged()
    }

    /// Writes `/big-body` chunks while the connection is writable; `channelWritabilityChanged` resumes it.
    private func writeBigChunks(context: ChannelHandlerContext) {
        while bigChunksLeft > 0 {
            guard context.channel.isWritable else {
                statistics.withLockedValue { $0.stalls += 1 }
                return
            }
            bigChunksLeft -= 1
            let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 64 * 1024)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
            statistics.withLockedValue { $0.chunksSent += 1 }
        }
        // A flush can turn the channel unwritable and writable again inside `writeAndFlush`: the nested call from
        // `channelWritabilityChanged` then wrote the rest and ended the response.
        guard pendingURI != nil, !isClosed else { return }
        end(context: context)
    }

    private func end(context: ChannelHandlerContext) {
        guard !isClosed else { return }  // cut off: not a completed response
        timer = nil
        pendingURI = nil
        statistics.withLockedValue { $0.responsesCompleted += 1 }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// `/path?a=1&b=2` as `("/path", ["a": 1, "b": 2])` (integer values only).
    private static func split(_ uri: String) -> (String, [String: Int]) {
        let parts = uri.split(separator: "?", maxSplits: 1)
        var query: [String: Int] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1)
                if keyValue.count == 2, let value = Int(keyValue[1]) { query[String(keyValue[0])] = value }
            }
        }
        return (parts.first.map(String.init) ?? "/", query)
    }
}

// Confined to its channel's loop.
@available(*, unavailable)
extension EndpointHandler: Sendable {}
