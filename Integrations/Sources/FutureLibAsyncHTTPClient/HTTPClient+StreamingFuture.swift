public import AsyncHTTPClient
public import FutureLib
public import Logging
public import NIOCore

extension HTTPClient {
    /// Executes `request` as a future of the response head; its body streams with AsyncHTTPClient's back-pressure,
    /// and `cancellationToken` still cancels it while it streams.
    ///
    /// Use it for bodies too large to hold in memory; for the others,
    /// ``AsyncHTTPClient/HTTPClient/execute(_:timeout:upTo:logger:cancellationToken:)`` is simpler.
    ///
    /// ```swift
    /// let stop = CancellationRequest(linkedTo: [shutdown, CancellationRequest(cancelAfter: .seconds(60)).token])
    /// let response = try await client.execute(request, timeout: .seconds(300), cancellationToken: stop.token).value()
    /// for try await chunk in response.body {  // reads from the socket only as fast as this loop asks
    ///     try file.write(chunk)
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// - Before the head arrives, as for ``AsyncHTTPClient/HTTPClient/execute(_:timeout:upTo:logger:cancellationToken:)``:
    ///   an already cancelled token sends nothing; a token cancelled in flight fails the future with
    ///   `CancellationError` at once and AsyncHTTPClient cancels the request, closing its connection.
    /// - From the head on, the token ends the body at once, whether or not the consumer has begun or is pulling:
    ///   AsyncHTTPClient cancels the request and closes its connection, a waiting pull (`next()`) throws
    ///   `CancellationError`, and so does every later pull. Dropping the response and its iterators before the
    ///   body's end also closes the connection.
    /// - After the body's end, the token does nothing.
    ///
    /// ### Deadline
    /// The request carries its remaining time in `deadlineHeader`, so that a server (a Hummingbird application with
    /// `FutureLibHummingbird`'s middleware, any Connect server) stops when the caller would stop waiting: the
    /// smaller of `timeout` (AsyncHTTPClient gives up then anyway) and the token's
    /// ``Cancellation/CancellationToken/timeRemaining``, and never more than a value the request's own header
    /// already says; whole milliseconds rounded down, measured as the request starts. A request always has a
    /// `timeout`, so the header is always sent (``HTTPClientRequest/setDeadline(_:for:timeout:)``).
    ///
    /// ### Semantics
    /// - The future completes exactly once, when the head arrives (on a FutureLib worker thread) or with
    ///   `CancellationError` (on the cancelling thread), or with AsyncHTTPClient's error.
    /// - The body is AsyncHTTPClient's stream, pulled one chunk per `next()` by a task that the token cancels: it
    ///   reads from the connection only as fast as the consumer asks (back-pressure), and can be iterated once.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - timeout: AsyncHTTPClient's deadline for the whole request, from now.
    ///   - logger: AsyncHTTPClient's logger for this request; `nil` logs nothing.
    ///   - deadlineHeader: The header that tells the server how long the request has (``DeadlineHeader/connectTimeout``,
    ///     `Connect-Timeout-Ms`, by default); `nil` sends none. See "Deadline".
    ///   - cancellationToken: Cancels the request, before the head and while the body streams.
    /// - Returns: A future of the response, completed when its head arrives. It fails with `CancellationError` when
    ///   the token was cancelled first, or with AsyncHTTPClient's error.
    public func execute(
        _ request: HTTPClientRequest,
        timeout: TimeAmount,
        logger: Logger? = nil,
        deadlineHeader: DeadlineHeader? = .connectTimeout,
        cancellationToken: CancellationToken
    ) -> Future<HTTPClientResponse> {
        Future(cancellationToken: cancellationToken) { [self] in
            var request = request
            // Measured as the task starts, just before AsyncHTTPClient takes the request.
            if let deadlineHeader { request.setDeadline(deadlineHeader, for: cancellationToken, timeout: timeout) }
            var response = try await execute(request, timeout: timeout, logger: logger)
            // A response dropped because the token won meanwhile cancels its request: AsyncHTTPClient closes the
            // connection when its body is released unread.
            response.body = .stream(TokenCancelledBody(base: response.body, cancellationToken: cancellationToken))
            return response
        }
    }
}

/// A response body pulled through a task of its own that the token cancels, one chunk per `next()`.
///
/// The task starts with the body, when the head arrives, so the token ends AsyncHTTPClient's body stream (which
/// cancels the request and closes its connection) at once, even before the consumer makes an iterator or while it
/// is not pulling. Pulling one chunk per demand keeps AsyncHTTPClient's back-pressure: nothing is read from the
/// connection ahead of the consumer.
private struct TokenCancelledBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    private let relay: BodyRelay

    init(base: HTTPClientResponse.Body, cancellationToken: CancellationToken) {
        relay = BodyRelay(base: base, cancellationToken: cancellationToken)
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(relay: relay, chunks: relay.chunks.makeAsyncIterator())
    }

    struct Iterator: AsyncIteratorProtocol {
        let relay: BodyRelay
        var chunks: AsyncThrowingStream<ByteBuffer, any Error>.AsyncIterator

        mutating func next() async throws -> ByteBuffer? {
            try relay.cancellationToken.checkCancellation()
            relay.demand.yield(())
            return try await chunks.next(isolation: #isolation)
        }
    }
}

/// The pulling task and the streams to it; releasing it (the response and its iterator are gone) ends the task,
/// which releases AsyncHTTPClient's stream and so closes the connection of a body not read to its end.
private final class BodyRelay: Sendable {
    let demand: AsyncStream<Void>.Continuation
    let chunks: AsyncThrowingStream<ByteBuffer, any Error>
    let cancellationToken: CancellationToken

    init(base: HTTPClientResponse.Body, cancellationToken: CancellationToken) {
        let (demands, demand) = AsyncStream.makeStream(of: Void.self)
        let (chunks, output) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        self.demand = demand
        self.chunks = chunks
        self.cancellationToken = cancellationToken
        Task {
            do {
                // The token cancels this task; `for await` over the demands and AsyncHTTPClient's `next()` both
                // end on cancellation, and leaving the closure releases AsyncHTTPClient's iterator.
                try await withCancellation(cancellationToken) {
                    var iterator = base.makeAsyncIterator()
                    for await _ in demands {
                        guard let chunk = try await iterator.next() else { break }
                        output.yield(chunk)
                    }
                }
                output.finish(throwing: cancellationToken.isCancellationRequested ? CancellationError() : nil)
            } catch {
                output.finish(throwing: cancellationToken.isCancellationRequested ? CancellationError() : error)
            }
        }
    }

    deinit {
        demand.finish()  // the consumer is gone: the task stops pulling
    }
}
