// Stubs for the blocks about the nested Integrations/ package (Documentation/ServerSideSwift.md,
// Integrations/README.md, the doc comments of Integrations/Sources), compiled by
// `Scripts/check-doc-snippets.py --integrations` against that package's build, with
// ../Prelude.swift. Type checking only: nothing here runs.

import AsyncHTTPClient
import FutureLib
import NIOCore
import NIOPosix

// MARK: - Documentation/Migration.md (its NIO section)

extension `Documentation/Migration.md` {
    static let loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()
    static let port = 8080
    static let token = CancellationToken.none
}

// MARK: - The doc comments of Integrations/Sources

/// What the examples read: a loop, a channel, a client; type checking only, so the channel is never made.
private let exampleGroup = MultiThreadedEventLoopGroup.singleton
private var exampleChannel: any Channel { fatalError("type checking only") }

extension `Integrations/Sources/FutureLibNIO/EventLoop+ExecutionContext.swift` {
    static let group = exampleGroup
    static let loop: any EventLoop = exampleGroup.next()
    static let user = Future(value: "ada")
    static let body = Future(value: ByteBuffer())
    static var channel: any Channel { exampleChannel }
}

extension `Integrations/Sources/FutureLibNIO/EventLoop+ScheduleTask.swift` {
    static let loop: any EventLoop = exampleGroup.next()
    static func sendPing() {}
    static func flush() {}
}

extension `Integrations/Sources/FutureLibNIO/EventLoopFuture+Future.swift` {
    static var bootstrap: ClientBootstrap { ClientBootstrap(group: exampleGroup) }
    static let deadline = CancellationRequest()
    static func lookUp(_ key: String) -> Future<String> { Future(value: key) }
    static func unwrapInboundIn(_ data: NIOAny) -> String { "" }
}

extension `Integrations/Sources/FutureLibAsyncHTTPClient/HTTPClient+Future.swift` {
    static let client = HTTPClient(eventLoopGroup: exampleGroup)
}

extension `Integrations/Sources/FutureLibAsyncHTTPClient/HTTPClient+Scoped.swift` {
    static let client = HTTPClient(eventLoopGroup: exampleGroup)
}

/// Where the streaming example writes the body.
struct ChunkSink {
    func write(_ chunk: ByteBuffer) throws {}
}

extension `Integrations/Sources/FutureLibAsyncHTTPClient/HTTPClient+StreamingFuture.swift` {
    static let client = HTTPClient(eventLoopGroup: exampleGroup)
    static let request = HTTPClientRequest(url: "http://127.0.0.1:8080/large")
    static let shutdown = CancellationToken.none
    static let file = ChunkSink()
}

extension `Integrations/Sources/FutureLibServiceLifecycle/GracefulShutdown+Token.swift` {
    static let request = HTTPClientRequest(url: "http://127.0.0.1:8080/")
    static func fetchUpdates(cancellationToken: CancellationToken) -> Future<Void> { Future(value: ()) }
    static func store(_ response: HTTPClientResponse) {}
}
