import Synchronization

/// A server's graceful shutdown, as the tokens of its RPCs follow it: one for every RPC of a
/// ``ServerCancellationInterceptor``.
///
/// swift-service-lifecycle runs its graceful-shutdown handlers inside its own lock, so the handler that each RPC
/// registers only marks the shutdown begun and cancels ``request`` from a task of its own: the tokens' handlers
/// (user code, the cancellation of handler tasks) then run outside that lock. An RPC whose handle fires once the
/// shutdown has begun reads it as the shutdown, even before that task ran.
final class ServerShutdown: Sendable {
    /// Cancelled with `GracefulShutdownError` when the shutdown begins; every RPC's token is linked to it.
    let request = CancellationRequest()
    /// Set when the shutdown begins, before ``request`` is cancelled.
    private let begun = Atomic<Bool>(false)
    /// A token of the server's that also cancels every RPC (``ServerCancellationInterceptor/shutdown``), if it can
    /// fire: each RPC links to it as well, so that it keeps no handler once the RPCs are done.
    let other: CancellationToken?

    /// - Parameter other: A token that also cancels every RPC, with its own reason; `.none` for none.
    init(also other: CancellationToken) {
        self.other = other.canBeCancelled ? other : nil
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
    }

    /// Begins the shutdown from inside a lock (swift-service-lifecycle's): marks it begun at once and cancels
    /// ``request`` from a new task, once, whatever the number of RPCs that call it.
    func beginOutsideLock() {
        guard !begun.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Task { [request] in request.cancel(reason: GracefulShutdownError()) }
    }
}
