import Dispatch
import Synchronization

/// The shared heart of a request: what its tokens and registrations point at.
///
/// The request owns the core; tokens and registrations hold it too, but never the request, so a
/// request is deallocated as soon as its owner (and any pending timer or source link) lets go, and
/// the core then becomes `abandoned`: ``CancellationToken/canBeCancelled`` turns false and every
/// stored handler is released.
final class CancellationCore: Sendable {
    typealias Handler = RegistrationList.Handler

    private let state = Lock(CancellationState())
    /// Mirrors "phase is cancelling or cancelled" so that `isCancellationRequested` costs one load.
    private let requested = Atomic<Bool>(false)
    /// Mirrors "phase is abandoned".
    private let abandoned = Atomic<Bool>(false)

    init() {}

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
        guard case .runHandlers(let first, let timer) = action else { return }
        timer?.cancel()
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

    /// The request was deallocated without being cancelled.
    func abandon() {
        let released = state.withLock { state in
            let released = state.abandon()
            if released != nil { abandoned.store(true, ordering: .relaxed) }
            return released
        }
        released?.timer?.cancel()
        _ = consume released  // the handlers' captures are released here, outside the lock
    }

    // MARK: - Timer

    /// Where every timer fires and runs its request's handlers: one serial queue of the package's.
    ///
    /// Not `DispatchQueue.global()`: that pool has about one thread per core, and user work that
    /// blocks them (or floods it) delayed timers by seconds in the test suite. A serial queue
    /// created here targets Dispatch's overcommit pool, which gives it a thread of its own
    /// whatever the global queues are doing. Handlers should be short (they always should:
    /// they delay the caller of `cancel()`); a slow one delays the timers behind it.
    static let timerQueue = DispatchQueue(label: "FutureLib.timers", qos: .userInitiated)

    /// Arms (or re-arms) the timer that cancels `request` at `deadline`. The timer's handler holds
    /// the request, so a pending timer keeps it alive; cancelling releases the timer.
    func arm(at deadline: DispatchTime, for request: CancellationRequest) {
        state.withLock { state in
            switch state.armTimer() {
            case .none:
                return
            case .reschedule(let timer):
                timer.schedule(deadline: deadline)
            case .create:
                let timer = DispatchSource.makeTimerSource(queue: Self.timerQueue)
                timer.setEventHandler { request.cancel() }
                timer.schedule(deadline: deadline)
                state.install(timer)
                timer.activate()
            }
        }
    }
}
