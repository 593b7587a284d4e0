public import AsyncHTTPClient
public import FutureLib
public import Logging
public import NIOCore

extension HTTPClient {
    /// Executes `request` in a child task of the calling task and hands its response to `handleResponse`, while
    /// `cancellationToken` cancels both in flight.
    ///
    /// The form for `async` code: no `Future` and no unstructured task, and the response is AsyncHTTPClient's own,
    /// its body streamed from the connection, not collected and rebuilt. The token covers every phase, from
    /// waiting for a connection to the last chunk `handleResponse` reads.
    ///
    /// ```swift
    /// let deadline = CancellationRequest(cancelAfter: .seconds(2))
    /// let request = HTTPClientRequest(url: "http://127.0.0.1:8080/users/7")
    /// let user = try await client.execute(request, timeout: .seconds(30), cancellationToken: deadline.token) {
    ///     response -> ByteBuffer? in
    ///     guard response.status == .ok else { return nil }
    ///     return try await response.body.collect(upTo: 1 << 20)  // the token still covers the body
    /// }
    /// ```
    ///
    /// A status code such as 404 is not an error: check `response.status` in `handleResponse`.
    ///
    /// ### Cancellation
    /// - A token that is already cancelled throws `CancellationError` at once: no connection is made, nothing is
    ///   sent, `handleResponse` is not called.
    /// - Cancelled while the request is in flight (queued for a connection, being sent, waiting for the head) or
    ///   while `handleResponse` reads the body, this throws `CancellationError`, whatever the request or
    ///   `handleResponse` threw, and AsyncHTTPClient cancels the request: one that was not yet sent never is, and
    ///   one on a connection closes that connection, so the server sees it close early. A request cancelled
    ///   through the token never fails with `HTTPClientError.cancelled`; ``Cancellation/CancellationToken/cancellationReason``
    ///   says why (`DeadlineExceededError` for a timer).
    /// - Cancelled once `handleResponse` has returned, nothing happens: its value is returned.
    /// - The token cancels the child task (an `async let`) that runs the request and `handleResponse`, never the
    ///   calling task, which goes on to answer (a server's 504) as before. Cancelling the calling task cancels the
    ///   child too, and AsyncHTTPClient's error is thrown unchanged.
    /// - The handler registered on the token is removed before this returns, so a long-lived token (a shutdown
    ///   token) keeps nothing per request.
    ///
    /// ### Deadline
    /// The request carries its remaining time in `deadlineHeader`, as in
    /// ``AsyncHTTPClient/HTTPClient/execute(_:timeout:upTo:logger:deadlineHeader:cancellationToken:)``: the
    /// smaller of `timeout` and the token's ``Cancellation/CancellationToken/timeRemaining``, never more than a
    /// value the request's own header already says; whole milliseconds rounded down, measured as the request
    /// starts (``HTTPClientRequest/setDeadline(_:for:timeout:)``).
    ///
    /// ### Semantics
    /// - `handleResponse` runs once, in the child task (on the global concurrent executor, as AsyncHTTPClient's
    ///   own `execute` does), with the response head, its body not yet read; this returns when it has returned.
    /// - Errors other than the token's are AsyncHTTPClient's (an `HTTPClientError` such as `.deadlineExceeded`
    ///   after `timeout`) or what `handleResponse` throws, unchanged.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - timeout: AsyncHTTPClient's deadline for the whole request, from now.
    ///   - logger: AsyncHTTPClient's logger for this request; `nil` logs nothing.
    ///   - deadlineHeader: The header that tells the server how long the request has (``DeadlineHeader/connectTimeout``,
    ///     `Connect-Timeout-Ms`, by default); `nil` sends none. See "Deadline".
    ///   - cancellationToken: Cancels the request and `handleResponse`'s reading of the body.
    ///   - handleResponse: Reads the response; its body streams from the connection while the token covers it.
    /// - Returns: What `handleResponse` returns.
    /// - Throws: `CancellationError` when the token was cancelled first; otherwise AsyncHTTPClient's error or what
    ///   `handleResponse` throws.
    public func execute<Result: Sendable>(
        _ request: HTTPClientRequest,
        timeout: TimeAmount,
        logger: Logger? = nil,
        deadlineHeader: DeadlineHeader? = .connectTimeout,
        cancellationToken: CancellationToken,
        handleResponse: @escaping @Sendable (HTTPClientResponse) async throws -> Result
    ) async throws -> Result {
        guard !cancellationToken.isCancellationRequested else { throw CancellationError() }
        var request = request
        if let deadlineHeader { request.setDeadline(deadlineHeader, for: cancellationToken, timeout: timeout) }
        do {
            // The token cancels the child task; AsyncHTTPClient cancels the request (closing its connection) when
            // the task awaiting it, or reading its body, is cancelled. A child, not this task: cancelling a task
            // cannot be undone, and the caller's task (a Hummingbird connection's) must go on to answer.
            async let result = withCancellation(cancellationToken) {
                let response = try await execute(request, timeout: timeout, logger: logger)
                return try await handleResponse(response)
            }
            return try await result
        } catch {
            if cancellationToken.isCancellationRequested { throw CancellationError() }
            throw error
        }
    }
}
