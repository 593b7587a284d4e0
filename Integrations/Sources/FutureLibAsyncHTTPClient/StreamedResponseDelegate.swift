import AsyncHTTPClient
import FoundationEssentials
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Hands AsyncHTTPClient's delegate callbacks to a task awaiting the response head, then streams the body to it,
/// with back-pressure: what the `async` form of `execute` runs a request through, so that the token can cancel the
/// request through its `HTTPClient.Task` instead of cancelling a task.
///
/// One object per request: it is the delegate, the state behind the response's body, and the place the awaiting
/// task's continuations wait. AsyncHTTPClient calls it on an event loop; the task calls `head()` and the body's
/// `next()`. Every continuation and promise is resumed after the lock is released.
final class StreamedResponseDelegate: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    /// Body parts buffered before AsyncHTTPClient is asked to wait (AsyncHTTPClient's own `async` body holds one).
    private static let bufferedParts = 5

    private let request: HTTPClientRequest
    // NIO's lock, which ThreadSanitizer sees (the standard library's `Mutex` it does not, on Linux).
    private let state = NIOLockedValueBox(State())

    init(request: HTTPClientRequest) {
        self.request = request
        #if DEBUG
        Self.live.withLockedValue { $0[request.url, default: 0] += 1 }
        #endif
    }

    #if DEBUG
    deinit {
        Self.live.withLockedValue { live in
            live[request.url, default: 0] -= 1
            if live[request.url] == 0 { live[request.url] = nil }
        }
    }

    /// The delegates alive, by request URL: how tests see that a request released its delegate (debug builds).
    static let live = NIOLockedValueBox<[String: Int]>([:])
    #endif

    // MARK: - The awaiting task

    /// The response, once its head has arrived; its body streams from this object.
    func head() async throws -> HTTPClientResponse {
        if let head = try state.withLockedValue({ try $0.takeHead() }) { return response(head) }
        let head = try await withUnsafeThrowingContinuation { continuation in
            let immediate = state.withLockedValue { $0.waitForHead(continuation) }
            if let immediate { continuation.resume(with: immediate) }
        }
        return response(head)
    }

    /// The next body part, `nil` at the body's end.
    func next() async throws -> ByteBuffer? {
        let (taken, demand) = try state.withLockedValue { try $0.takePart() }
        demand?.succeed()
        if let taken { return taken.part }
        return try await withUnsafeThrowingContinuation { continuation in
            let immediate = state.withLockedValue { $0.waitForPart(continuation) }
            if let (result, demand) = immediate {
                demand?.succeed()
                continuation.resume(with: result)
            }
        }
    }

    /// Gives up the body's unread rest once the task no longer reads it: cancels `task` unless the request has
    /// ended, and releases AsyncHTTPClient from waiting for demand (it waits for that even after a cancel when it
    /// already holds the body's end), so that the request ends and releases this delegate.
    func abandon(_ task: HTTPClient.Task<Void>) {
        let (wasOpen, partWaiter, demand) = state.withLockedValue { $0.abandon() }
        guard wasOpen else { return }
        task.cancel()
        partWaiter?.resume(throwing: HTTPClientError.cancelled)
        demand?.fail(HTTPClientError.cancelled)
    }

    private func response(_ head: HTTPResponseHead) -> HTTPClientResponse {
        let history = state.withLockedValue { $0.history }
        return HTTPClientResponse(
            version: head.version,
            status: head.status,
            headers: head.headers,
            body: .stream(Body(delegate: self)),
            history: history
        )
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
        let waiter = state.withLockedValue { $0.receiveHead(head) }
        waiter?.resume(returning: head)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let action = state.withLockedValue { $0.receivePart(buffer, limit: Self.bufferedParts) }
        switch action {
        case .resume(let waiter):
            waiter.resume(returning: buffer)
            return task.eventLoop.makeSucceededVoidFuture()
        case .accept:
            return task.eventLoop.makeSucceededVoidFuture()
        case .wait:
            // Past the watermark: AsyncHTTPClient reads nothing more until the task takes a part.
            let demand = task.eventLoop.makePromise(of: Void.self)
            let taken = state.withLockedValue { $0.waitForDemand(demand) }
            if taken { demand.succeed() }
            return demand.futureResult
        }
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        finish(.failure(error))
    }

    /// Ends the response with `task`'s failure too: AsyncHTTPClient tells the delegate how the request ended,
    /// except when it fails only the task (a redirect cycle, too many redirects, a client shut down). A second end
    /// is ignored.
    func follow(_ task: HTTPClient.Task<Void>) {
        // The closure captures this delegate alone, which then serves as its context: no allocation.
        task.futureResult.whenComplete { [self] result in
            if case .failure(let error) = result { finish(.failure(error)) }
        }
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        finish(.success(()))
    }

    private func finish(_ end: Result<Void, any Error>) {
        let (headWaiter, partWaiter, demand, end) = state.withLockedValue { $0.finish(end) }
        switch end {
        case .failure(let error):
            headWaiter?.resume(throwing: error)
            partWaiter?.resume(throwing: error)
        case .success, .none:
            partWaiter?.resume(returning: nil)
        }
        demand?.succeed()
    }
}

// MARK: - The body

extension StreamedResponseDelegate {
    /// The response's body: the parts this object receives, in order, iterated once.
    struct Body: AsyncSequence, Sendable {
        typealias Element = ByteBuffer

        let delegate: StreamedResponseDelegate

        func makeAsyncIterator() -> Iterator {
            Iterator(delegate: delegate)
        }

        struct Iterator: AsyncIteratorProtocol {
            let delegate: StreamedResponseDelegate

            mutating func next() async throws -> ByteBuffer? {
                try await delegate.next()
            }
        }
    }
}

// MARK: - State

extension StreamedResponseDelegate {
    /// What the delegate has received and who waits for it; every event returns what to resume once unlocked.
    struct State {
        enum Head {
            case awaited(UnsafeContinuation<HTTPResponseHead, any Error>?)
            case arrived(HTTPResponseHead)
            case taken
        }

        enum PartAction {
            case resume(UnsafeContinuation<ByteBuffer?, any Error>)
            case accept
            case wait
        }

        /// A part taken by the task, boxed so that a `nil` part is not confused with none taken.
        struct Taken {
            let part: ByteBuffer?
        }

        var head = Head.awaited(nil)
        var history: [HTTPClientRequestResponse] = []
        /// The parts not yet taken, oldest first: the first one inline (a small body allocates no queue).
        var first: ByteBuffer?
        var more: [ByteBuffer] = []
        var partCount: Int { first == nil ? 0 : 1 + more.count }
        var end: Result<Void, any Error>?
        var partWaiter: UnsafeContinuation<ByteBuffer?, any Error>?
        var demand: EventLoopPromise<Void>?

        mutating func takeHead() throws -> HTTPResponseHead? {
            switch head {
            case .arrived(let value):
                head = .taken
                return value
            case .awaited:
                if case .failure(let error) = end { throw error }
                return nil
            case .taken:
                preconditionFailure("the response head is awaited once")
            }
        }

        /// The result to resume with at once, or `nil` when the continuation now waits.
        mutating func waitForHead(
            _ continuation: UnsafeContinuation<HTTPResponseHead, any Error>
        ) -> Result<HTTPResponseHead, any Error>? {
            switch head {
            case .arrived(let value):
                head = .taken
                return .success(value)
            case .awaited:
                if case .failure(let error) = end { return .failure(error) }
                head = .awaited(continuation)
                return nil
            case .taken:
                preconditionFailure("the response head is awaited once")
            }
        }

        mutating func receiveHead(_ value: HTTPResponseHead) -> UnsafeContinuation<HTTPResponseHead, any Error>? {
            guard case .awaited(let waiter) = head else { return nil }
            if let waiter {
                head = .taken
                return waiter
            }
            head = .arrived(value)
            return nil
        }

        mutating func receivePart(_ part: ByteBuffer, limit: Int) -> PartAction {
            guard end == nil else { return .accept }  // abandoned: nobody reads it
            if let waiter = partWaiter {
                partWaiter = nil
                return .resume(waiter)
            }
            if first == nil { first = part } else { more.append(part) }
            return partCount < limit ? .accept : .wait
        }

        /// Whether the task took a part meanwhile, so that AsyncHTTPClient need not wait.
        mutating func waitForDemand(_ promise: EventLoopPromise<Void>) -> Bool {
            guard partCount >= StreamedResponseDelegate.bufferedParts, end == nil else { return true }
            demand = promise
            return false
        }

        /// The part taken (or the end, `nil`), and AsyncHTTPClient's demand to release; no part yet: `nil`.
        mutating func takePart() throws -> (Taken?, EventLoopPromise<Void>?) {
            if let part = first {
                first = more.isEmpty ? nil : more.removeFirst()
                let released = demand
                demand = nil
                return (Taken(part: part), released)
            }
            switch end {
            case .none: return (nil, nil)
            case .success: return (Taken(part: nil), nil)
            case .failure(let error): throw error
            }
        }

        mutating func waitForPart(
            _ continuation: UnsafeContinuation<ByteBuffer?, any Error>
        ) -> (Result<ByteBuffer?, any Error>, EventLoopPromise<Void>?)? {
            do {
                let (taken, released) = try takePart()
                if let taken { return (.success(taken.part), released) }
            } catch {
                return (.failure(error), nil)
            }
            precondition(partWaiter == nil, "the body is iterated once, one part at a time")
            partWaiter = continuation
            return nil
        }

        /// Records the end (cancelled) unless there is one, dropping the parts not taken: whether the request was
        /// still open, and the waiter and demand to release.
        mutating func abandon() -> (Bool, UnsafeContinuation<ByteBuffer?, any Error>?, EventLoopPromise<Void>?) {
            guard end == nil else { return (false, nil, nil) }
            end = .failure(HTTPClientError.cancelled)
            first = nil
            more.removeAll()
            let waiter = partWaiter
            partWaiter = nil
            let released = demand
            demand = nil
            return (true, waiter, released)
        }

        mutating func finish(
            _ result: Result<Void, any Error>
        ) -> (
            UnsafeContinuation<HTTPResponseHead, any Error>?, UnsafeContinuation<ByteBuffer?, any Error>?,
            EventLoopPromise<Void>?, Result<Void, any Error>?
        ) {
            guard end == nil else { return (nil, nil, nil, nil) }
            var result = result
            if case .awaited = head, case .success = result {
                result = .failure(HTTPClientError.remoteConnectionClosed)  // cannot happen: an end with no head
            }
            end = result
            var headWaiter: UnsafeContinuation<HTTPResponseHead, any Error>?
            if case .awaited(let waiter) = head, let waiter {
                head = .taken
                headWaiter = waiter
            }
            let waiter = partWaiter
            partWaiter = nil
            let released = demand
            demand = nil
            if case .failure = result {  // a failed body yields its error, not stale parts
                first = nil
                more.removeAll()
            }
            return (headWaiter, waiter, released, result)
        }
    }
}
