import ServiceLifecycle
import Synchronization

/// A server's graceful shutdown, as the tokens of its RPCs follow it: one for every RPC of a
/// ``ServerCancellationInterceptor``.
///
/// The `ServiceGroup`'s graceful shutdown is watched once for the server, not in each RPC: the first RPC starts a
/// task (``watchServiceGroup()``) that holds one graceful-shutdown handler until the shutdown begins or the server's
/// interceptor is released. A handler per RPC took swift-service-lifecycle's lock twice in each of an RPC's two
/// scopes and added async frames around the handler, which cost its task allocator's slabs.
///
/// swift-service-lifecycle runs its graceful-shutdown handlers inside its own lock, so that handler only marks the
/// shutdown begun and cancels ``request`` from a task of its own: the tokens' handlers (user code, the cancellation
/// of handler tasks) then run outside that lock. An RPC whose handle fires once the shutdown has begun reads it as
/// the shutdown, even before that task ran.
final class ServerShutdown: Sendable {
    /// Cancelled with `GracefulShutdownError` when the shutdown begins; every RPC's token is linked to it.
    let request = CancellationRequest()
    /// Set when the shutdown begins, before ``request`` is cancelled.
    private let begun = Atomic<Bool>(false)
    /// Whether the task that watches the service group's graceful shutdown has been started.
    private let watching = Atomic<Bool>(false)
    /// Whether that task holds its handler (or found no service group to register with): from then on a shutdown
    /// that begins sets ``hasBegun`` before the group's trigger returns.
    private let watchRegistered = Atomic<Bool>(false)
    /// Ends that task: cancelled when the shutdown begins, and when this object is released.
    private let watchEnd = CancellationRequest()
    /// A token of the server's that also cancels every RPC (``ServerCancellationInterceptor/shutdown``), if it can
    /// fire: each RPC links to it as well, so that it keeps no handler once the RPCs are done.
    let other: CancellationToken?

    /// - Parameter other: A token that also cancels every RPC, with its own reason; `.none` for none.
    init(also other: CancellationToken) {
        self.other = other.canBeCancelled ? other : nil
    }

    deinit {
        watchEnd.cancel()
    }

    /// Whether the shutdown has begun (its ``request`` may not be cancelled yet).
    var hasBegun: Bool {
        // Acquiring: pairs with the releasing stores in `begin()` and `beginOutsideLock()`.
        begun.load(ordering: .acquiring)
    }

    /// Begins the shutdown on the calling thread: ``request``'s handlers run before it returns. For callers that
    /// hold no lock (``ServerCancellationInterceptor/beginGracefulShutdown()``).
    func begin() {
        begun.store(true, ordering: .releasing)
        request.cancel(reason: GracefulShutdownError())
        watchEnd.cancel()
    }

    /// Begins the shutdown from inside a lock (swift-service-lifecycle's, in the watch's handler): marks it begun at
    /// once and cancels ``request`` from a new task, once.
    func beginOutsideLock() {
        guard !begun.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Task { [request, watchEnd] in
            request.cancel(reason: GracefulShutdownError())
            watchEnd.cancel()
        }
    }

    /// Makes sure the graceful shutdown of the `ServiceGroup` the calling task runs in reaches this shutdown, for each
    /// RPC as it starts.
    ///
    /// The first call starts a task that watches it (swift-service-lifecycle's task-local manager, which the new task
    /// inherits with the caller's other task-local values, and keeps until it ends) and begins this shutdown with it.
    /// The task ends when the shutdown begins or this object is released; it holds this object weakly. Outside a
    /// `ServiceGroup` it watches nothing. Until that task holds its handler, each call asks the group itself, so that
    /// an RPC that starts once the group is shutting down is cancelled before it runs.
    // Never inlined into the interceptor's `intercept`: that async function's frame comes from the task's allocator,
    // and this body's locals in it took a new slab of it on most RPCs (`GRPC_BENCH_ONLY=2` of
    // `GRPCCancellationBenchmark` counts the allocations per call).
    @inline(never)
    func watchServiceGroup() {
        guard !watchRegistered.load(ordering: .acquiring) else { return }
        if !watching.exchange(true, ordering: .acquiringAndReleasing) {
            let end = watchEnd.token
            Task { [weak self] in
                await withGracefulShutdownHandler {
                    self?.watchRegistered.store(true, ordering: .releasing)
                    await end.wait()
                } onGracefulShutdown: { [weak self] in
                    // swift-service-lifecycle runs this inside its lock.
                    self?.beginOutsideLock()
                }
            }
        }
        // The watch's handler is not registered yet: swift-service-lifecycle's own flag (its lock; only in the moment
        // before the watch's task first runs).
        if !hasBegun, Task.isShuttingDownGracefully { begin() }
    }
}
