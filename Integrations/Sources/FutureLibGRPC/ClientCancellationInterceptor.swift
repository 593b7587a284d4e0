import FutureLibHTTPDeadline
public import GRPCCore

/// Makes the calls a handler makes inherit its RPC's deadline and cancellation, whatever calls them (code
/// generated for a service, or `GRPCClient`'s own methods): install it on the `GRPCClient`.
///
/// ```swift
/// let client = GRPCClient(
///     transport: try .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: 8080), transportSecurity: .plaintext),
///     interceptors: [ClientCancellationInterceptor()]
/// )
/// ```
///
/// ### Semantics
/// - Inside a handler under ``ServerCancellationInterceptor`` (``RPCCancellation/token`` set), each call:
///   - sends the time left of the inbound deadline as its `grpc-timeout` when that is sooner than the call's own,
///     rounded down (`GRPCTimeout.format(_:)` of `FutureLibHTTPDeadline`): the server it calls never gets more time
///     than the caller had left;
///   - is cancelled, its stream reset, when the inbound token fires, and fails with
///     ``GRPCCore/RPCError/Code/init(cancellationReason:)``'s code (`CANCELLED`, `DEADLINE_EXCEEDED`, `UNAVAILABLE`)
///     and the reason as `cause`. It cancels the task that makes the call, which the inbound RPC's end ends anyway.
/// - Outside a handler, and inside ``RPCCancellation/detached(_:)``, it does nothing.
/// - An interceptor cannot set `CallOptions.timeout`: the local deadline is the inbound token's own timer. The
///   `cancellationToken:` calls on `GRPCClient` set it.
public struct ClientCancellationInterceptor: ClientInterceptor {
    /// Creates the interceptor.
    ///
    /// ```swift
    /// let interceptors: [any ClientInterceptor] = [ClientCancellationInterceptor()]
    /// ```
    public init() {}

    // `@concurrent`, as GRPCCore's protocol (built without nonisolated(nonsending) by default) declares it.
    /// Runs the call with the inherited deadline and cancellation.
    @concurrent public func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingClientRequest<Input>,
        context: ClientContext,
        next: @concurrent (StreamingClientRequest<Input>, ClientContext) async throws -> StreamingClientResponse<Output>
    ) async throws -> StreamingClientResponse<Output> {
        guard let token = RPCCancellation.current, token.canBeCancelled else {
            return try await next(request, context)
        }
        return try await Self.intercept(request: request, context: context, token: token, next: next)
    }

    /// Runs the call with `token`'s deadline and cancellation: a function of its own, so that a call made outside
    /// a handler (most of a client's calls) has the small frame of the `guard` above, not this one's (an async
    /// function's frame is allocated from its task's allocator; a larger one can take a new slab, a `malloc`).
    @concurrent private static func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingClientRequest<Input>,
        context: ClientContext,
        token: CancellationToken,
        next: @concurrent (StreamingClientRequest<Input>, ClientContext) async throws -> StreamingClientResponse<Output>
    ) async throws -> StreamingClientResponse<Output> {
        if let reason = token.cancellationReason { throw RPCError(cancellationReason: reason) }
        var request = request
        if let left = token.timeRemaining {
            let header = DeadlineHeader.grpcTimeout
            let own = header.timeout(in: request.metadata[stringValues: header.name])
            if own.map({ left < $0 }) ?? true {
                request.metadata.replaceOrAddString(header.fieldValue(for: left), forKey: header.name)
            }
        }
        var response: StreamingClientResponse<Output>
        do {
            response = try await withCancellation(token) { try await next(request, context) }
        } catch {
            throw Self.mapped(error, token)
        }
        switch response.accepted {
        case .success(var contents):
            contents.bodyParts = RPCAsyncSequence(wrapping: TokenBoundSequence(base: contents.bodyParts, token: token))
            response.accepted = .success(contents)
        case .failure(let error):
            if let mapped = Self.mapped(error, token) as? RPCError { response.accepted = .failure(mapped) }
        }
        return response
    }

    /// `error`, or, once `token` is cancelled, the `RPCError` of its reason.
    static func mapped(_ error: any Error, _ token: CancellationToken) -> any Error {
        guard let reason = token.cancellationReason else { return error }
        return RPCError(cancellationReason: reason)
    }
}

/// A response's parts, read with the current task cancelled when `token` fires, failing then with the reason's
/// `RPCError`.
struct TokenBoundSequence<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element: Sendable {
    typealias Element = Base.Element
    typealias Failure = any Error
    let base: Base
    let token: CancellationToken

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let token: CancellationToken

        mutating func next() async throws -> Element? {
            do {
                return try await withCancellation(token) { try await base.next(isolation: #isolation) }
            } catch {
                throw ClientCancellationInterceptor.mapped(error, token)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), token: token)
    }
}
