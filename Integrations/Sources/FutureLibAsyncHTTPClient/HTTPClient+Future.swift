public import AsyncHTTPClient
public import FutureLib
public import Logging
public import NIOCore

extension HTTPClient {
    /// Executes `request` and collects its body (up to `maxBodyBytes`), as a future that `cancellationToken`
    /// cancels in flight.
    ///
    /// The returned response holds its whole body in memory (`response.body` yields it as one buffer), so the
    /// token covers every phase of the request: waiting for a connection, sending, waiting for the response head,
    /// and receiving the body.
    ///
    /// ```swift
    /// let deadline = CancellationRequest(cancelAfter: .seconds(2))
    /// let request = HTTPClientRequest(url: "http://127.0.0.1:8080/users/7")
    /// let user = client.execute(request, timeout: .seconds(30), upTo: 1 << 20, cancellationToken: deadline.token)
    /// let response = try await user.value()
    /// let body = try await response.body.collect(upTo: 1 << 20)  // already in memory: returns at once
    /// ```
    ///
    /// A status code such as 404 is not an error: check `response.status`.
    ///
    /// ### Cancellation
    /// - A token that is already cancelled fails the future with `CancellationError` before this method returns:
    ///   no connection is made and nothing is sent.
    /// - Cancelled while the request is in flight (queued for a connection, being sent, waiting for the head, or
    ///   while the body streams), the future fails with `CancellationError` at once, on the cancelling thread, and
    ///   AsyncHTTPClient cancels the request: one that was not yet sent never is, and one on a connection closes
    ///   that connection (HTTP/1.1 has no other way to stop a response), so the server sees it close early.
    /// - Cancelled after the body was complete, nothing happens: the response stays.
    /// - The handler registered on the token is released when the request ends, so a long-lived token (a
    ///   shutdown token) does not collect one per request.
    ///
    /// ### After the future fails
    /// The future fails before AsyncHTTPClient has finished tearing the request down: its task ends, and the
    /// connection closes, a moment later. Shut the client's `EventLoopGroup` down only after the requests on it
    /// have ended (NIO traps in debug builds on work left on a loop that shut down). AsyncHTTPClient takes a
    /// cancelled request out of its connection queue asynchronously, so a request cancelled while queued may
    /// still be handed a connection in that moment, sent, and then cut off.
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
    /// - The future completes exactly once: with the response, with `CancellationError` when the token won, or
    ///   with AsyncHTTPClient's error (an `HTTPClientError` such as `.deadlineExceeded` after `timeout`, or
    ///   `NIOTooManyBytesError` when the body is longer than `maxBodyBytes`). A request cancelled through the token
    ///   never fails with `HTTPClientError.cancelled`.
    /// - A response completes the future on one of the client's event loop threads; a cancellation, on the
    ///   thread that cancels the token. Continuations run on the contexts they were given (`.eventLoop(_:)` for a
    ///   loop).
    /// - A request without a body is collected through AsyncHTTPClient's delegate API, with no task: the token's
    ///   handler cancels its `HTTPClient.Task`. One with a body, or with a `localAddress`, runs AsyncHTTPClient's
    ///   `async` `execute` in a task that the token cancels. The guarantees above are the same.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - timeout: AsyncHTTPClient's deadline, from now: for a request without a body, the whole request, the
    ///     body included; for one with a body, until the head arrives.
    ///   - maxBodyBytes: The longest body accepted; a longer one fails the request.
    ///   - logger: AsyncHTTPClient's logger for this request; `nil` logs nothing.
    ///   - deadlineHeader: The header that tells the server how long the request has (``DeadlineHeader/connectTimeout``,
    ///     `Connect-Timeout-Ms`, by default); `nil` sends none. See "Deadline".
    ///   - cancellationToken: Cancels the request and fails the future with `CancellationError`.
    /// - Returns: A future of the response with its whole body. It fails with `CancellationError` when the token
    ///   was cancelled first, or with AsyncHTTPClient's error.
    public func execute(
        _ request: HTTPClientRequest,
        timeout: TimeAmount,
        upTo maxBodyBytes: Int,
        logger: Logger? = nil,
        deadlineHeader: DeadlineHeader? = .connectTimeout,
        cancellationToken: CancellationToken
    ) -> Future<HTTPClientResponse> {
        guard !cancellationToken.isCancellationRequested else { return Future(error: CancellationError()) }
        var request = request
        if let deadlineHeader { request.setDeadline(deadlineHeader, for: cancellationToken, timeout: timeout) }
        guard let delegateRequest = request.delegateRequest else {
            return executeInTask(request, timeout: timeout, upTo: maxBodyBytes, logger: logger, cancellationToken)
        }
        // AsyncHTTPClient's delegate API: its `HTTPClient.Task` cancels the request (closing its connection) when
        // the token's handler tells it to, and the delegate collects the body into the future's promise.
        let delegate = CollectingResponseDelegate(request: request, maxBodyBytes: maxBodyBytes)
        let task = execute(
            request: delegateRequest,
            delegate: delegate,
            eventLoop: .indifferent,
            deadline: .now() + timeout,
            logger: logger
        )
        delegate.follow(task)
        delegate.cancel(task, with: cancellationToken)
        return delegate.promise.future
    }

    /// The `Future` form for a request the delegate API cannot send as it is (a body, a local address): in a
    /// task that the token cancels.
    private func executeInTask(
        _ request: HTTPClientRequest,
        timeout: TimeAmount,
        upTo maxBodyBytes: Int,
        logger: Logger?,
        _ cancellationToken: CancellationToken
    ) -> Future<HTTPClientResponse> {
        // FutureLib runs the work in a task that the token cancels; AsyncHTTPClient cancels the request (closing
        // its connection) when that task is cancelled, in every phase including the body stream.
        Future(cancellationToken: cancellationToken) { [self] in
            let response = try await execute(request, timeout: timeout, logger: logger)
            let body = try await response.body.collect(upTo: maxBodyBytes)
            return HTTPClientResponse(
                version: response.version,
                status: response.status,
                headers: response.headers,
                body: .bytes(body),
                history: response.history
            )
        }
    }
}
