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
        if CancellingThread.isRunningHandlers(of: self) { return }  // waiting here would wait for ourselves
        let semaphore = DispatchSemaphore(value: 0)
        let mustWait = state.withLock { $0.waitForRunningHandler(key, semaphore: semaphore) }
        if mustWait { semaphore.wait() }
    }

    // MARK: - Cancellation

    /// Requests cancellation: runs every stored handler once, newest first, on this thread,
    /// taking the lock once per handler and never holding it while a handler runs.
    func cancel() {
        let action = state.withLock { state -> CancellationState.CancelAction in
            let action = state.cancel()
            if case .runHandlers = action {
                // Releasing: pairs with the acquiring load in `isCancellationRequested`.
                requested.store(true, ordering: .releasing)
            }
            return action
        }
        guard case .runHandlers(let first, let timer) = action else { return }
        timer?.cancel()
        guard let first else { return }
        CancellingThread.runHandlers(of: self) { runHandlers(startingWith: first) }
    }

    /// The cancelling loop: runs `next`, then asks the state for the following handler, until none is left.
    ///
    /// Each entry is consumed by the call that runs it, so its closure is released right after it
    /// returned, with no retain and release around the call. (A local of this function, not a
    /// variable captured by a closure: the move checker tracks only locals.)
    private func runHandlers(startingWith first: consuming CancellationState.Next) {
        var next = first
        while true {
            let key = next.key
            Self.run(consume next)
            switch state.withLock({ $0.handlerReturned(key) }) {
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

/// Knows which cores the current thread is running cancellation handlers for, so that
/// `unregisterAndWait()` called from inside a handler returns at once instead of deadlocking.
///
/// The standard library has no thread-local API; a task-local bound in synchronous code outside a
/// task falls back to thread-local storage, and inside a task it is scoped to this synchronous call.
enum CancellingThread {
    /// A node of the chain of cores being cancelled on this thread (a handler may cancel another request).
    // Sendable: `task` is only compared with `==`, never used to act on the task; the rest is immutable.
    final class Frame: @unchecked Sendable {
        let core: ObjectIdentifier
        /// The task running the handlers, or nil on a thread outside any task. A `Task { }` started
        /// by a handler inherits this task-local while running on another thread: it must still wait.
        let task: UnsafeCurrentTask?
        let outer: Frame?
        init(core: ObjectIdentifier, task: UnsafeCurrentTask?, outer: Frame?) {
            self.core = core
            self.task = task
            self.outer = outer
        }
    }

    @TaskLocal static var innermost: Frame?

    static func runHandlers(of core: CancellationCore, _ body: () -> Void) {
        let frame = Frame(core: ObjectIdentifier(core), task: withUnsafeCurrentTask { $0 }, outer: innermost)
        $innermost.withValue(frame, operation: body)
    }

    static func isRunningHandlers(of core: CancellationCore) -> Bool {
        var frame = innermost
        let id = ObjectIdentifier(core)
        let task = withUnsafeCurrentTask { $0 }
        while let current = frame {
            if current.core == id, current.task == task { return true }
            frame = current.outer
        }
        return false
    }
}
