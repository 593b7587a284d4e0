import GRPCCore
import ServiceLifecycle
import Synchronization

/// One inbound RPC's token on the server, and the scopes in which the handler's work runs with it.
///
/// The handler's work runs in two scopes: the interceptor chain (`next`, which runs a unary handler whole) and the
/// response's producer (a streaming handler's body, which GRPCCore runs after the interceptors returned). Each scope
/// watches the RPC's cancellation handle and the graceful shutdown, and sets ``RPCCancellation/current``.
final class InboundRPC: Sendable {
    let request: CancellationRequest
    /// When the `grpc-timeout` the client sent passes.
    let deadline: ContinuousClock.Instant?
    /// How long before ``deadline`` a cancellation of the handle counts as the deadline: half the timeout, at most
    /// 1 s. GRPCCore starts its own timer for the same timeout before this interceptor reads the header (how much
    /// earlier grows with the machine's load), and a client that gives up at its deadline resets the stream before
    /// the server's deadline by the time the request took to arrive.
    let deadlineSlack: Duration
    /// The server-wide shutdown: the first RPC that sees a graceful shutdown begins it, for every RPC.
    let shutdown: ServerShutdown
    /// 0: no scope registering; 1: a scope is registering on the handle; 2: the handle fired while it was
    /// (maybe inside GRPCCore's lock), so the scope reports it once registered.
    private let registration = Atomic<UInt8>(0)

    init(timeout: Duration?, shutdown: ServerShutdown, linkedTo tokens: [CancellationToken]) {
        request = CancellationRequest(linkedTo: tokens)
        self.shutdown = shutdown
        if let timeout {
            deadline = .now + timeout
            deadlineSlack = min(.seconds(1), timeout / 2)
            request.cancel(after: timeout)
        } else {
            deadline = nil
            deadlineSlack = .zero
        }
    }

    /// Runs `body` with the token: in ``RPCCancellation/current``, cancelled by the handle and the graceful
    /// shutdown, and, with `cancelsTask`, in a child task that the token cancels (not the RPC's own task, which
    /// GRPCCore still needs to write the status). Once the token is cancelled, what `body` throws becomes the
    /// `RPCError` of the reason.
    func run<T: Sendable>(cancelsTask: Bool, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let token = request.token
        do {
            return try await withGracefulShutdownHandler {
                registration.store(1, ordering: .relaxed)
                return try await withRPCCancellationHandler {
                    // Registered: a cancellation seen meanwhile is reported here, outside GRPCCore's lock.
                    if !registration.compareExchange(expected: 1, desired: 0, ordering: .acquiringAndReleasing)
                        .exchanged
                    {
                        registration.store(0, ordering: .relaxed)
                        handleCancelled()
                    }
                    return try await RPCCancellation.$current.withValue(token) {
                        guard cancelsTask else { return try await body() }
                        return try await withThrowingTaskGroup(of: T.self) { group in
                            group.addTask { try await withCancellation(token, operation: body) }
                            guard let value = try await group.next() else { throw CancellationError() }
                            return value
                        }
                    }
                } onCancelRPC: { [self] in
                    // GRPCCore runs this inside its lock when the RPC was already cancelled.
                    if registration.compareExchange(expected: 1, desired: 2, ordering: .acquiringAndReleasing)
                        .exchanged
                    {
                        return
                    }
                    handleCancelled()
                }
            } onGracefulShutdown: { [shutdown] in
                // swift-service-lifecycle runs this inside its lock.
                shutdown.beginOutsideLock()
            }
        } catch {
            throw mapped(error)
        }
    }

    /// `error`, or, once the token is cancelled, the `RPCError` of its reason.
    func mapped(_ error: any Error) -> any Error {
        guard let reason = request.token.cancellationReason else { return error }
        return RPCError(cancellationReason: reason)
    }

    /// The RPC's cancellation handle fired: the deadline (if it is due), else the graceful shutdown (if it has
    /// begun: the transport cancels the handles when it quiesces), else the client.
    private func handleCancelled() {
        if let deadline, ContinuousClock.now >= deadline - deadlineSlack {
            request.cancel(reason: DeadlineExceededError())
        } else if shutdown.hasBegun {
            request.cancel(reason: GracefulShutdownError())
        } else {
            request.cancel(reason: RPCCancelledByClientError())
        }
    }
}
