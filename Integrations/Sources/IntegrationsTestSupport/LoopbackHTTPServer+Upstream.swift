public import AsyncHTTPClient
public import Cancellation
import FutureLibAsyncHTTPClient
import NIOCore

extension LoopbackHTTPServer {
    /// `GET /slow-head?ms=<ms>` through `client` under `cancellationToken`, as a proxying route calls its
    /// upstream with the request's token: the body, up to 64 KiB.
    ///
    /// - Parameters:
    ///   - ms: How long the server holds the response head, in milliseconds.
    ///   - client: The client that makes the call.
    ///   - cancellationToken: Cancels the call.
    /// - Returns: The response body.
    /// - Throws: The call's error: `CancellationError` once the token is cancelled.
    public func slowHead(
        ms: String,
        through client: HTTPClient,
        cancellationToken: CancellationToken
    )
        async throws -> String
    {
        let response = try await client.execute(
            HTTPClientRequest(url: url("/slow-head?ms=\(ms)")),
            timeout: .seconds(600),
            upTo: 1 << 16,
            cancellationToken: cancellationToken
        ).value()
        return String(buffer: try await response.body.collect(upTo: 1 << 16))
    }

    /// `GET /slow-head?ms=<ms>` through `client`'s `async` form under `cancellationToken` (the response's body
    /// streamed to the closure, AsyncHTTPClient's delegate API underneath), as the server guide's proxying route
    /// calls its upstream: the body, up to 64 KiB.
    ///
    /// - Parameters:
    ///   - ms: How long the server holds the response head, in milliseconds.
    ///   - client: The client that makes the call.
    ///   - cancellationToken: Cancels the call and the reading of its body.
    /// - Returns: The response body.
    /// - Throws: The call's error: `CancellationError` once the token is cancelled.
    public func slowHeadStreamed(
        ms: String,
        through client: HTTPClient,
        cancellationToken: CancellationToken
    )
        async throws -> String
    {
        try await client.execute(
            HTTPClientRequest(url: url("/slow-head?ms=\(ms)")),
            timeout: .seconds(600),
            cancellationToken: cancellationToken
        ) { response in
            String(buffer: try await response.body.collect(upTo: 1 << 16))
        }
    }
}
