import Dispatch
import Synchronization

/// The shared heart of a request: what its tokens and registrations point at.
///
/// The request owns the core; tokens and registrations hold it too, but never the request, so a
/// request is deallocated as soon as its owner lets go. A pending timer and the links on a linked
/// request's sources reach the core only weakly: they keep it cancellable, never alive.
///
/// - When the request is deallocated and no timer or link can cancel it any more, the core becomes
///   `abandoned`: ``CancellationToken/canBeCancelled`` turns false and every stored handler is
///   released.
/// - When the core itself is deallocated (the request and every token and registration of it are
///   gone, so nothing can observe it), its timer is stopped and its links are removed from the
///   sources at once: nothing that can no longer be observed is kept.
final class CancellationCore: Sendable {
    typealias Handler = RegistrationList.Handler

    private let state = Lock(CancellationState())
    /// Mirrors "phase is cancelling or cancelled" so that `isCancellationRequested` costs one load.
    private let requested = Atomic<Bool>(false)
    /// Mirrors "phase is abandoned".
    private let abandoned = Atomic<Bool>(false)

    init() {}

    deinit {
        // Cancelled or abandoned, it has already let go of its timer and links (and has no handlers).
        guard !requested.load(ordering: .relaxed), !abandoned.load(ordering: .relaxed) else { return }
        Self.release(state.withLock { $0.coreReleased() })
    }

    /// A core that is cancelled from the start, shared by every ``CancellationToken/cancelled``.
    static let alreadyCancelled: CancellationCore = {
        let core = CancellationCore()
        core.cancel()
        return core
    }()

    var isCancellationRequested: Bool {
        // Acquiring: a thread that sees `true` also sees everything the canceller did before `cancel()`.
        requested.load(ordering: .acquiring)
    }

    var canBeCancelled: Bool {
        !abandoned.load(ordering: .relaxed)  // a hint only; racing deallocation is allowed either way
    }

    // MARK: - Registration

    /// Stores `handler`, or runs it at once when cancellation was already requested.
    /// Returns the key it is stored under, or nil when it ran or was dropped.
    func register(_ handler: @escaping Handler) -> RegistrationList.Key? {
        if isCancellationRequested {
            handler()
            return nil
        }
        let action = state.withLock { $0.register(handler) }
        switch action {
        case .stored(let key):
            return key
        case .runNow:
            handler()
            return nil
        case .drop:
            return nil
        }
    }

    /// Removes the handler stored under `key`. True exactly when it had not started.
    func unregister(_ key: RegistrationList.Key) -> Bool {
        let action = state.withLock { $0.unregister(key) }
        if case .removed = action { return true }  // the handler is released here, outside the lock
        return false
    }

    /// Like `unregister`, and when the handler is running on another thread, waits until it returned.
    func unregisterAndWait(_ key: RegistrationList.Key) {
        let action = state.withLock { $0.unregister(key) }
        guard case .running = action else { return }
        let semaphore = DispatchSemaphore(value: 0)
        let caller = ThreadIdentity.current
        let mustWait = state.withLock { $0.waitForRunningHandler(key, semaphore: semaphore, caller: caller) }
        if mustWait { semaphore.wait() }
    }

    // MARK: - Cancellation

    /// Requests cancellation: runs every stored handler once, newest first, on this thread,
    /// taking the lock once per handler and never holding it while a handler runs.
    func cancel() {
        let thread = ThreadIdentity.current
        let action = state.withLock { state -> CancellationState.CancelAction in
            let action = state.cancel(on: thread)
            if case .runHandlers = action {
                // Releasing: pairs with the acquiring load in `isCancellationRequested`.
                requested.store(true, ordering: .releasing)
            }
            return action
        }
        guard case .runHandlers(let first, let attachments) = action else { return }
        attachments?.detach()
        guard let first else { return }
        runHandlers(startingWith: first)
    }

    /// The cancelling loop: runs `next`, then asks the state for the following handler, until none is left.
    ///
    /// Each entry is consumed by the call that runs it, so its closure is released right after it
    /// returned, with no retain and release around the call. (A local of this function, not a
    /// variable captured by a closure: the move checker tracks only locals.)
    private func runHandlers(startingWith first: consuming CancellationState.Next) {
        var next = first
        while true {
            Self.run(consume next)
            switch state.withLock({ $0.handlerReturned() }) {
            case .run(let following):
                next = following
            case .wake(let waiters, let following):
                for waiter in waiters { waiter.signal() }
                guard let following else { return }
                next = following
            case .finished:
                return
            }
        }
    }

    private static func run(_ entry: consuming CancellationState.Next) {
        entry.handler()
    }

    // MARK: - Lifetime

    /// The `CancellationRequest` object was deallocated; without a pending timer or a source link,
    /// nothing can cancel this core any more.
    func requestReleased() {
        guard !isCancellationRequested else { return }  // cancelling let go of the timer and links
        let remains = state.withLock { state in
            let remains = state.requestReleased()
            if remains != nil { abandoned.store(true, ordering: .relaxed) }
            return remains
        }
        if let remains { Self.release(remains) }
    }

    /// No source holds this linked request's link any more (see ``Link``).
    fileprivate func linkReleased() {
        guard !isCancellationRequested else { return }  // cancelling removes the links: the common case
        let remains = state.withLock { state in
            let remains = state.linkReleased()
            if remains != nil { abandoned.store(true, ordering: .relaxed) }
            return remains
        }
        if let remains { Self.release(remains) }
    }

    /// Stops the timer, removes the links and releases the handlers (dropping `remains`), outside any lock.
    private static func release(_ remains: consuming CancellationState.Remains) {
        remains.attachments?.detach()
    }

    // MARK: - Links

    /// Links this request to `sources`: the first of them to be cancelled cancels it.
    ///
    /// Each source holds one ``Link``, which reaches this core weakly: a live source keeps the
    /// request cancellable while something can observe it, never alive by itself. The links are
    /// removed when the request is cancelled, or when the core is deallocated.
    func link(to sources: [CancellationToken]) {
        guard sources.contains(where: \.canBeCancelled) else { return }
        let link = Link(self)
        var links: [CancellationRegistration] = []
        links.reserveCapacity(sources.count)
        for source in sources where source.canBeCancelled {
            if isCancellationRequested { break }
            links.append(source.onCancel { link.fire() })
        }
        // Cancelled meanwhile (an already cancelled source): remove the links stored so far.
        if let removed = state.withLock({ $0.install(links: links) }) {
            for link in removed { link.unregister() }
        }
        // Our reference to `link` ends here: if no source stored it, it reports `linkReleased()` now.
    }

    // MARK: - Timer

    /// Arms (or re-arms) the timer that cancels this core `delay` from now, on `clock` (nil: the
    /// clock of its timer, else the system clock). The timer reaches the core weakly: it keeps the
    /// request cancellable while something can observe it, never alive. Cancelling, abandoning
    /// or deallocating the core stops and releases the timer.
    func arm(after delay: Duration, on clock: (any TimerClock)?) {
        switch state.withLock({ $0.armTimer(on: clock) }) {
        case .none:
            return
        case .reschedule(let timer):
            timer.reschedule(after: delay)
        case .create(let clock):
            let timer = clock.makeTimer(after: delay) { [weak self] in self?.cancel() }
            let stale = state.withLock { $0.install(timer, on: clock) }
            stale?.cancel()
        }
    }

    /// How many handlers are stored on this core right now (O(n)): for the tests that check that
    /// nothing is left behind on a long-lived source.
    var registrationCount: Int {
        state.withLock { $0.registrationCount }
    }

    /// The state as debug descriptions show it, read in one critical section (O(n)).
    var debugSnapshot: CancellationDebugSnapshot {
        state.withLock { state in
            let flags = state.attachmentFlags
            return CancellationDebugSnapshot(
                phase: state.phase,
                handlers: state.registrationCount,
                hasTimer: flags.hasTimer,
                isLinked: flags.isLinked,
                isRequestReleased: flags.isRequestReleased
            )
        }
    }
}

/// A linked request's handler on its sources: cancels the request, reaching its core weakly.
///
/// One link is shared by every source of a request. When the last source lets go of it without
/// having cancelled the request (each source was deallocated uncancelled), the request is told
/// that no source can cancel it any more.
private final class Link: Sendable {
    private weak let core: CancellationCore?

    init(_ core: CancellationCore) {
        self.core = core
    }

    func fire() {
        core?.cancel()
    }

    deinit {
        core?.linkReleased()
    }
}
