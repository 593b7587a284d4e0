import AsyncHTTPClient
import FoundationEssentials
import FutureLib
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Collects a response (up to a limit) from AsyncHTTPClient's delegate callbacks into a promise that the token
/// fails at once: what the `Future` form of `execute` runs a request through, with no task of its own.
///
/// The token's handler rejects the promise with `CancellationError` and cancels the request through its
/// `HTTPClient.Task`; AsyncHTTPClient then closes the connection and reports its own error here, which the
/// promise, already rejected, ignores. The handler is unregistered when the request ends, whichever way.
final class CollectingResponseDelegate: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    let promise = Promise<HTTPClientResponse>()
    private let request: HTTPClientRequest
    private let maxBodyBytes: Int
    // NIO's lock, which ThreadSanitizer sees (the standard library's `Mutex` it does not, on Linux).
    private let state = NIOLockedValueBox(State())

    init(request: HTTPClientRequest, maxBodyBytes: Int) {
        self.request = request
        self.maxBodyBytes = maxBodyBytes
    }

    /// Lets `cancellationToken` cancel `task`, until the request ends.
    func cancel(_ task: HTTPClient.Task<Void>, with cancellationToken: CancellationToken) {
        state.withLockedValue { if !$0.ended { $0.task = task } }
        let registration = cancellationToken.onCancel { self.cancelByToken() }  // one reference: no context
        let ended = state.withLockedValue { state in
            guard !state.ended else { return true }
            state.registration = registration
            return false
        }
        if ended { registration.unregister() }
    }

    private func cancelByToken() {
        promise.reject(CancellationError())  // at once, on the cancelling thread
        state.withLockedValue { $0.task }?.cancel()
    }

    // MARK: - AsyncHTTPClient's callbacks

    func didVisitURL(task: HTTPClient.Task<Void>, _ visited: HTTPClient.Request, _ head: HTTPResponseHead) {
        state.withLockedValue { state in
            // The first visit is the request as given (its URL as written); later ones are redirects.
            var request = self.request
            if !state.history.isEmpty {
                request = HTTPClientRequest(url: visited.url.absoluteString)
                request.method = visited.method
                request.headers = visited.headers
            }
            state.history.append(HTTPClientRequestResponse(request: request, responseHead: head))
        }
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        // A declared length over the limit fails before any of the body is read, as `collect(upTo:)` does: the
        // failed future fails the request.
        let length = head.headers.first(name: "content-length").flatMap { Int($0, radix: 10) }
        if let length, length > maxBodyBytes, head.status != .notModified, request.method != .HEAD {
            let error = NIOTooManyBytesError(maxBytes: maxBodyBytes)
            return task.eventLoop.makeFailedFuture(error)
        }
        state.withLockedValue { $0.head = head }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let fits = state.withLockedValue { $0.append(buffer, upTo: maxBodyBytes) }
        guard fits else {
            let error = NIOTooManyBytesError(maxBytes: maxBodyBytes)
            return task.eventLoop.makeFailedFuture(error)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        fail(error)
    }

    /// Rejects the promise with `task`'s failure too: AsyncHTTPClient tells the delegate how the request ended,
    /// except when it fails only the task (a redirect cycle, too many redirects, a client shut down). A second end
    /// is ignored.
    func follow(_ task: HTTPClient.Task<Void>) {
        // The closure captures this delegate alone, which then serves as its context: no allocation.
        task.futureResult.whenComplete { [self] result in
            if case .failure(let error) = result { fail(error) }
        }
    }

    private func fail(_ error: any Error) {
        let (_, registration) = state.withLockedValue { $0.end() }
        registration?.unregister()
        promise.reject(error)  // ignored when the token rejected it first
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        let (collected, registration) = state.withLockedValue { $0.end() }
        registration?.unregister()
        guard let collected, let head = collected.head else {
            promise.reject(HTTPClientError.remoteConnectionClosed)  // cannot happen: an end with no head
            return
        }
        promise.fulfill(
            HTTPClientResponse(
                version: head.version,
                status: head.status,
                headers: head.headers,
                body: .bytes(collected.body ?? ByteBuffer()),
                history: collected.history
            )
        )
    }
}

// MARK: - State

extension CollectingResponseDelegate {
    struct State {
        var head: HTTPResponseHead?
        var body: ByteBuffer?
        var history: [HTTPClientRequestResponse] = []
        var registration: CancellationRegistration?
        var task: HTTPClient.Task<Void>?
        var ended = false

        /// Whether the body, with `part`, is still within `limit` bytes.
        mutating func append(_ part: ByteBuffer, upTo limit: Int) -> Bool {
            guard var collected = body else {
                body = part
                return part.readableBytes <= limit
            }
            body = nil  // the buffer stays uniquely referenced while it grows
            guard collected.readableBytes + part.readableBytes <= limit else { return false }
            var part = part
            collected.writeBuffer(&part)
            body = collected
            return true
        }

        /// What was collected (the first time only) and the registration to remove.
        mutating func end() -> (State?, CancellationRegistration?) {
            guard !ended else { return (nil, nil) }
            ended = true
            let registration = self.registration
            self.registration = nil
            task = nil  // the task holds this delegate: no cycle left once the request ended
            return (self, registration)
        }
    }
}
