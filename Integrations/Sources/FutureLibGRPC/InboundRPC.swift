import GRPCCore
import ServiceLifecycle
import Synchronization

/// One inbound RPC's token on the server, and the scopes in which the handler's work runs with it.
///
/// The handler's work runs in two scopes: the interceptor chain (`next`, which runs a unary handler whole) and the
/// response's producer (a streaming handler's body, which GRPCCore runs after the interceptors returned). Each scope
/// watches the RPC's cancellation handle and the graceful shutdown, and sets ``RPCCancellation/current``.
///
/// ### What an RPC costs
/// The RPC's objects are made once and serve both scopes: this object, its request (linked to the server's
/// shutdown and, with a `grpc-timeout`, given its timer in the same call) and the one handler it gives
/// GRPCCore's handle (``onCancelRPC``). The graceful-shutdown handler is the server's. With
/// `cancelsTask`, the work runs in an `async let` child task (cheaper than a task group's), and the token cancels
/// it through a handler that holds only the task.
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
    /// Whether each scope runs its work in a child task that the token cancels.
    let cancelsTask: Bool
    /// The server's graceful-shutdown handler, the same for every RPC.
    let onGracefulShutdown: @Sendable () -> Void
    /// 0: no scope registering; 1: a scope is registering on the handle; 2: the handle fired while it was
    /// (maybe inside GRPCCore's lock), so the scope reports it once registered.
    private let registration = Atomic<UInt8>(0)

    /// - Parameters:
    ///   - timeout: The `grpc-timeout` the client sent, if any: the request's timer.
    ///   - shutdown: The server's shutdown.
    ///   - onGracefulShutdown: The server's graceful-shutdown handler.
    ///   - cancelsTask: Whether the work runs in a child task that the token cancels.
    init(
        timeout: Duration?,
        shutdown: ServerShutdown,
        onGracefulShutdown: @escaping @Sendable () -> Void,
        cancelsTask: Bool
    ) {
        self.shutdown = shutdown
        self.onGracefulShutdown = onGracefulShutdown
        self.cancelsTask = cancelsTask
        if let other = shutdown.other {
            request = CancellationRequest(linkedTo: [shutdown.request.token, other])
            if let timeout { request.cancel(after: timeout) }
        } else if let timeout {
            // The link and the timer in one call, with no array.
            request = CancellationRequest(linkedTo: shutdown.request.token, timeout: timeout)
        } else {
            request = CancellationRequest(linkedTo: [shutdown.request.token])
        }
        if let timeout {
            deadline = .now + timeout
            deadlineSlack = min(.seconds(1), timeout / 2)
        } else {
            deadline = nil
            deadlineSlack = .zero
        }
    }

    /// The handler given to GRPCCore's cancellation handle in both scopes: one closure per RPC.
    var onCancelRPC: @Sendable () -> Void {
        { [self] in
            // GRPCCore runs this inside its lock when the RPC was already cancelled as the scope registers.
            if registration.compareExchange(expected: 1, desired: 2, ordering: .acquiringAndReleasing).exchanged {
                return
            }
            handleCancelled()
        }
    }

    /// Runs `body` with the token: in ``RPCCancellation/current``, cancelled by the handle (through `onCancelRPC`,
    /// this RPC's ``onCancelRPC``) and the graceful shutdown, and, with ``cancelsTask``, in a child task that the
    /// token cancels (not the RPC's own task, which GRPCCore still needs to write the status). Once the token is
    /// cancelled, what `body` throws becomes the `RPCError` of the reason.
    func run<T: Sendable>(
        onCancelRPC: @escaping @Sendable () -> Void,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        do {
            return try await withGracefulShutdownHandler(
                operation: {
                    registration.store(1, ordering: .relaxed)
                    return try await withRPCCancellationHandler(
                        operation: {
                            // Registered: a cancellation seen meanwhile is reported here, outside GRPCCore's lock.
                            if !registration.compareExchange(
                                expected: 1,
                                desired: 0,
                                ordering: .acquiringAndReleasing
                            ).exchanged {
                                registration.store(0, ordering: .relaxed)
                                handleCancelled()
                            }
                            let token = request.token
                            return try await RPCCancellation.$current.withValue(token) {
                                guard cancelsTask else { return try await body() }
                                return try await runInChildTask(cancelledBy: token, body)
                            }
                        },
                        onCancelRPC: onCancelRPC
                    )
                },
                onGracefulShutdown: onGracefulShutdown
            )
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
