import IntegrationsTestSupport
import NIOCore
import NIOEmbedded
import Testing

@testable import FutureLibVapor

extension VaporApplicationTests {
    /// How a request finds its connection: in the table of all connections, or, when it arrives in its connection's
    /// read, from that connection's observer (`ReadingObserver`). Both must give the same connection.
    @Suite(.timeLimit(.minutes(5)))
    struct ConnectionLookupTests {
        @Test(
            "inside one connection's read, a request of another connection on the same loop finds its own connection, and one with no registered connection finds none"
        )
        func lookupInsideAnotherConnectionsRead() throws {
            let loop = EmbeddedEventLoop()
            let (first, firstObserver) = try observedChannel(port: 40_001, on: loop)
            let (second, _) = try observedChannel(port: 40_002, on: loop)
            let firstAddress = try SocketAddress(ipAddress: "127.0.0.1", port: 40_001)
            let secondAddress = try SocketAddress(ipAddress: "127.0.0.1", port: 40_002)
            let unknownAddress = try SocketAddress(ipAddress: "127.0.0.1", port: 40_003)
            // Outside any read: the table.
            let firstConnection = try #require(ClientConnection.connection(remote: firstAddress, loop: loop))
            let secondConnection = try #require(ClientConnection.connection(remote: secondAddress, loop: loop))
            #expect(firstConnection !== secondConnection)
            ReadingObserver.delivering(firstObserver) {
                #expect(ClientConnection.connection(remote: firstAddress, loop: loop) === firstConnection)
                #expect(ClientConnection.connection(remote: secondAddress, loop: loop) === secondConnection)
                #expect(ClientConnection.connection(remote: unknownAddress, loop: loop) == nil)
                // The same address on another loop is another connection (none here).
                #expect(ClientConnection.connection(remote: firstAddress, loop: EmbeddedEventLoop()) == nil)
            }
            #expect(ReadingObserver.current == nil)
            _ = try first.finish()
            _ = try second.finish()
            #expect(ClientConnection.connection(remote: firstAddress, loop: loop) == nil)
        }

        @Test("a read passes through the observer with the observer current, and nested reads restore the outer one")
        func readingObserverIsCurrentDuringItsRead() throws {
            let loop = EmbeddedEventLoop()
            let (channel, observer) = try observedChannel(port: 40_011, on: loop)
            let (other, otherObserver) = try observedChannel(port: 40_012, on: loop)
            let seen = SeenObservers()
            try channel.pipeline.syncOperations.addHandler(seen)
            try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\n"))
            #expect(seen.observers.count == 1 && seen.observers.first === observer)
            ReadingObserver.delivering(observer) {
                ReadingObserver.delivering(otherObserver) { #expect(ReadingObserver.current === otherObserver) }
                #expect(ReadingObserver.current === observer)
            }
            #expect(ReadingObserver.current == nil)
            _ = try channel.finish()
            _ = try other.finish()
        }

        /// A channel on `loop` whose client is 127.0.0.1:`port`, with an observer first in its pipeline (registered
        /// under that address, as an accepted connection's is).
        private func observedChannel(
            port: Int,
            on loop: EmbeddedEventLoop
        ) throws -> (EmbeddedChannel, ClientDisconnectObserver) {
            let channel = EmbeddedChannel(loop: loop)
            channel.remoteAddress = try SocketAddress(ipAddress: "127.0.0.1", port: port)
            let observer = ClientDisconnectObserver()
            try channel.pipeline.syncOperations.addHandler(observer)
            return (channel, observer)
        }
    }
}

/// Records the reading observer each read it passes on sees.
private final class SeenObservers: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    var observers: [ClientDisconnectObserver] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let current = ReadingObserver.current { observers.append(current) }
    }
}
