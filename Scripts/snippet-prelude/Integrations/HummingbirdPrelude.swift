// Stubs for the blocks of the doc comments of Integrations/Sources/FutureLibHummingbird (and the graceful-shutdown
// reason's), compiled by `Scripts/check-doc-snippets.py --integrations`. Type checking only: nothing here runs.

import AsyncHTTPClient
import FutureLibHummingbird
import Hummingbird
import NIOCore
import NIOPosix

/// What the examples read: a router, a client, a request's context; type checking only, so none is made.
private var exampleRouter: Router<BasicCancellableRequestContext> { fatalError("type checking only") }
private var exampleContext: BasicCancellableRequestContext { fatalError("type checking only") }
private var exampleSource: ApplicationRequestContextSource { fatalError("type checking only") }
private let exampleClient = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)

extension `Integrations/Sources/FutureLibHummingbird/ClientDisconnectedError.swift` {
    static var router: Router<BasicCancellableRequestContext> { exampleRouter }
    static let request = CancellationRequest()
    static func buildReport(cancellationToken: CancellationToken) async throws -> String { "" }
}

extension `Integrations/Sources/FutureLibHummingbird/ClientDisconnectObserver.swift` {
    static var router: Router<BasicCancellableRequestContext> { exampleRouter }
}

extension `Integrations/Sources/FutureLibHummingbird/RequestCancellation.swift` {
    static var router: Router<BasicCancellableRequestContext> { exampleRouter }
    static var context: BasicCancellableRequestContext { exampleContext }
    static var source: ApplicationRequestContextSource { exampleSource }
    static let client = exampleClient
    static let request = HTTPClientRequest(url: "http://127.0.0.1:8080/")
    static func export(cancellationToken: CancellationToken) async throws -> String { "" }
}

extension `Integrations/Sources/FutureLibHummingbird/RequestCancellationMiddleware.swift` {
    static var router: Router<BasicCancellableRequestContext> { exampleRouter }
    static let client = exampleClient
    static func report(cancellationToken: CancellationToken) async throws -> String { "" }
}
