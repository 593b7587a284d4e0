public import AsyncHTTPClient
public import FutureLib
public import Logging
public import NIOCore

extension HTTPClient {
    /// Executes `request` and hands its response to `handleResponse`, while `cancellationToken` cancels the request
    /// in flight, the body's reading included.
    ///
    /// The form for `async` code: no `Future`, no task of its own, and the response's body streams from the
    /// connection, not collected and rebuilt. The token covers every phase, from waiting for a connection to the
    /// last chunk `handleResponse` reads.
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
    /// - For a request without a body, the token reaches the code inside `handleResponse` only through the body
    ///   it reads: its task is not cancelled, so a `Task.sleep` or a call of its own there goes on (give it the
    ///   token), and a value it returns without reading the body further is returned. For a request with a body,
    ///   the token cancels the child task that `handleResponse` runs in, and all of it.
    /// - The token cancels the request, never the calling task, which goes on to answer (a server's 504) as
    ///   before. Cancelling the calling task cancels the request too, and throws `CancellationError`, as
    ///   AsyncHTTPClient's `async` `execute` does.
    /// - A body that `handleResponse` did not read to its end is cancelled when it returns or throws, closing its
    ///   connection, as AsyncHTTPClient does with a response dropped unread: read the body inside
    ///   `handleResponse`, not after.
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
    /// - `handleResponse` runs once, in the calling task, with the response head, its body not yet read; this
    ///   returns when it has returned. The body arrives with back-pressure: AsyncHTTPClient reads a few parts
    ///   ahead of `handleResponse`, no more.
    /// - A request without a body goes through AsyncHTTPClient's delegate API (`HTTPClient.Task`, whose
    ///   `cancel()` the token's handler calls); one with a body, or with a `localAddress`, through its `async`
    ///   `execute` in an `async let` child task that the token cancels, `handleResponse` running in that child.
    ///   The guarantees above are the same.
    /// - `timeout` is AsyncHTTPClient's deadline. For a request without a body it covers the whole request,
    ///   the body too, however long `handleResponse` takes to read it; for a request with a body, AsyncHTTPClient
    ///   stops it when the head arrives.
    /// - Errors other than the token's are AsyncHTTPClient's (an `HTTPClientError` such as `.deadlineExceeded`
    ///   after `timeout`, `.redirectCycleDetected`) or what `handleResponse` throws, unchanged.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - timeout: AsyncHTTPClient's deadline, from now: see "Semantics" for what it covers.
    ///   - logger: AsyncHTTPClient's logger for this request; `nil` logs nothing.
    ///   - deadlineHeader: The header that tells the server how long the request has (``DeadlineHeader/connectTimeout``,
    ///     `Connect-Timeout-Ms`, by default); `nil` sends none. See "Deadline".
    ///   - cancellationToken: Cancels the request and `handleResponse`'s reading of the body (see "Cancellation").
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
        guard let delegateRequest = request.delegateRequest else {
            return try await executeInChildTask(
                request,
                timeout: timeout,
                logger: logger,
                cancellationToken,
                handleResponse
            )
        }
        // AsyncHTTPClient's delegate API: its `HTTPClient.Task` cancels the request (closing its connection) when
        // told to, so the token's handler cancels it without cancelling any task, and no child task is needed.
        let delegate = StreamedResponseDelegate(request: request)
        let task = execute(
            request: delegateRequest,
            delegate: delegate,
            eventLoop: .indifferent,
            deadline: .now() + timeout,
            logger: logger
        )
        delegate.follow(task)
        let registration = cancellationToken.onCancel { task.cancel() }
        defer { registration.unregister() }
        do {
            return try await withTaskCancellationHandler {
                let result: Result
                do {
                    result = try await handleResponse(try await delegate.head())
                } catch {
                    delegate.abandon(task)
                    throw error
                }
                // A body not read to its end closes its connection, as AsyncHTTPClient's own response does when
                // it is dropped unread.
                delegate.abandon(task)
                return result
            } onCancel: {
                task.cancel()
            }
        } catch {
            if cancellationToken.isCancellationRequested { throw CancellationError() }
            // The calling task cancelled: `CancellationError`, as AsyncHTTPClient's `async` API throws.
            if _Concurrency.Task.isCancelled, error as? HTTPClientError == .cancelled { throw CancellationError() }
            throw error
        }
    }

    /// The async form for a request the delegate API cannot send as it is (a body, a local address): in an
    /// `async let` child task that the token cancels.
    private func executeInChildTask<Result: Sendable>(
        _ request: HTTPClientRequest,
        timeout: TimeAmount,
        logger: Logger?,
        _ cancellationToken: CancellationToken,
        _ handleResponse: @escaping @Sendable (HTTPClientResponse) async throws -> Result
    ) async throws -> Result {
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

extension HTTPClientRequest {
    /// The same request for AsyncHTTPClient's delegate API, when it has no body and no local address (the
    /// delegate API's request has neither in this form) and its URL parses; otherwise `nil`.
    var delegateRequest: HTTPClient.Request? {
        guard body == nil, localAddress == nil else { return nil }
        return try? HTTPClient.Request(
            url: url,
            method: method,
            headers: headers,
            body: nil,
            tlsConfiguration: tlsConfiguration
        )
    }
}
