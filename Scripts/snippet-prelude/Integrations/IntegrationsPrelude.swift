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
