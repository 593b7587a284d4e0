import GRPCCore
import Synchronization

/// One inbound RPC's token on the server, and the scopes in which the handler's work runs with it.
///
/// The handler's work runs in two scopes: the interceptor chain (`next`, which runs a unary handler whole) and the
/// response's producer (a streaming handler's body, which GRPCCore runs after the interceptors returned). Each scope
/// watches the RPC's cancellation handle and sets ``RPCCancellation/current``; the graceful shutdown reaches the
/// token through its link to the server's ``ServerShutdown``.
///
/// ### What an RPC costs
/// The RPC's objects are made once and serve both scopes: this object, its request (linked to the server's
/// shutdown and, with a `grpc-timeout`, given its timer in the same call) and the one handler it gives
/// GRPCCore's handle (``onCancelRPC``). With `cancelsTask`, the work runs in an `async let` child task (cheaper
/// than a task group's) that binds ``RPCCancellation/current`` itself (a child started while a task-local value is
/// bound copies it: an allocation), and this object is the token's handler that cancels it (`withCancellation`
/// would make an object per scope to hold the task).
final class InboundRPC: Sendable {
    let request: CancellationRequest
    /// When the `grpc-timeout` the client sent passes.
    let deadline: ContinuousClock.Instant?
    /// How long before ``deadline`` a cancellation of the handle counts as the deadline: half the timeout, at most
    /// 1 s. GRPCCore starts its own timer for the same timeout before this interceptor reads the header (how much
    /// earlier grows with the machine's load), and a client that gives up at its deadline resets the stream before
    /// the server's deadline by the time the request took to arrive.
    let deadlineSlack: Duration
    /// The server-wide shutdown, which every RPC's request is linked to.
    let shutdown: ServerShutdown
    /// Whether each scope runs its work in a child task that the token cancels.
    let cancelsTask: Bool
    /// 0: no scope registering; 1: a scope is registering on the handle; 2: the handle fired while it was
    /// (maybe inside GRPCCore's lock), so the scope reports it once registered.
    private let registration = Atomic<UInt8>(0)
    /// Whether a scope's child task is in ``task``.
    private let holdsTask = Atomic<Bool>(false)
    /// The child task of the scope running, for the token's handler to cancel (what `withCancellation` keeps in an
    /// object of its own, one per scope).
    // Sendable: written only by the child task itself, before it registers the handler that reads it and after
    // `unregisterAndWait()` returned (so after any run of that handler); `holdsTask` keeps a second scope out. As in
    // `withCancellation`, a handler dropped unrun and released later finds it `nil`.
    nonisolated(unsafe) private var task: UnsafeCurrentTask?

    /// - Parameters:
    ///   - timeout: The `grpc-timeout` the client sent, if any: the request's timer.
    ///   - shutdown: The server's shutdown.
    ///   - cancelsTask: Whether the work runs in a child task that the token cancels.
    init(timeout: Duration?, shutdown: ServerShutdown, cancelsTask: Bool) {
        self.shutdown = shutdown
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
        // Begun, its request maybe not cancelled yet (the watch cancels it from a task of its own): this RPC's token
        // is cancelled before its handler runs.
        if shutdown.hasBegun { request.cancel(reason: GracefulShutdownError()) }
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
    /// this RPC's ``onCancelRPC``) and, with ``cancelsTask``, in a child task that the token cancels (not the RPC's
    /// own task, which GRPCCore still needs to write the status). Once the token is cancelled, what `body` throws
    /// becomes the `RPCError` of the reason.
    func run<T: Sendable>(
        onCancelRPC: @escaping @Sendable () -> Void,
        _ body: @Sendable () async throws -> T
    ) async throws -> T {
        do {
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
                    guard cancelsTask else {
                        return try await RPCCancellation.$current.withValue(request.token) { try await body() }
                    }
                    // The task-local value is bound inside the child: a child task started while one is
                    // bound copies it (an allocation).
                    async let value = runCancellable(body)
                    return try await value
                },
                onCancelRPC: onCancelRPC
            )
        } catch {
            throw mapped(error)
        }
    }

    /// Runs `body` with the token in ``RPCCancellation/current``, the current task cancelled when the token fires.
    /// Called by the child task of a scope: this object is the token's handler, holding that task for the scope.
    private func runCancellable<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let token = request.token
        return try await RPCCancellation.$current.withValue(token) {
            // The scopes of an RPC run one after the other; should one start while another runs, it takes its own.
            guard !holdsTask.exchange(true, ordering: .acquiringAndReleasing) else {
                return try await withCancellation(token) { try await body() }
            }
            defer { holdsTask.store(false, ordering: .releasing) }
            withUnsafeCurrentTask { task = $0 }
            let registration = token.onCancel { [self] in task?.cancel() }
            defer {
                registration.unregisterAndWait()  // the task outlives a handler running now…
                task = nil  // …and one released later, unrun, holds no task
            }
            return try await body()
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
