// Stubs for the blocks of the doc comments of Integrations/Sources/FutureLibVapor, compiled by
// `Scripts/check-doc-snippets.py --integrations` in files that import Vapor (not Hummingbird). Type checking only:
// nothing here runs.

import AsyncHTTPClient
import FutureLibVapor
import NIOPosix
import Vapor

/// What the examples read: an application and a request; type checking only, so neither is made.
private var exampleApplication: Application { fatalError("type checking only") }
private var exampleRequest: Vapor.Request { fatalError("type checking only") }
private let exampleClient = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)

extension `Integrations/Sources/FutureLibVapor/ObservingHTTPServer.swift` {
    static var app: Application { exampleApplication }
}

extension `Integrations/Sources/FutureLibVapor/RequestCancellation.swift` {
    static var app: Application { exampleApplication }
    // `Vapor.Request`: the snippets module has a `Request` of its own (Prelude.swift).
    static var request: Vapor.Request { exampleRequest }
    static let client = exampleClient
    static let upstreamRequest = HTTPClientRequest(url: "http://127.0.0.1:8080/")
    static func buildReport(cancellationToken: CancellationToken) async throws -> String { "" }
    static func export(cancellationToken: CancellationToken) async throws -> String { "" }
    static func fetchUser(_ id: String?, cancellationToken: CancellationToken) async throws -> String { "" }
}

extension `Integrations/Sources/FutureLibVapor/RequestCancellationMiddleware.swift` {
    static var app: Application { exampleApplication }
    static var request: Vapor.Request { exampleRequest }
    static var responder: any Responder { exampleApplication.responder.current }
    static let client = exampleClient
    static func report(cancellationToken: CancellationToken) async throws -> String { "" }
}
