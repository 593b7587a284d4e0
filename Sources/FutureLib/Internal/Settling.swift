import Cancellation
import Dispatch
import FutureLibConcurrencyHelpers

/// FutureLib's side of `await ManualClock.advanceAndSettle(by:)`: waits until no work is in flight on
/// FutureLib's own contexts, so that a test's timers fire only once the work the previous one
/// started has armed what comes next.
///
/// What counts as in flight:
/// - On ``WorkerPool`` (`.default`, the tasks of async closures, a ``LimitedExecutionContext`` on
///   `.default`): a job queued, or running and not blocked in the library's blocking API. The
///   pool counts these under the lock it takes anyway for each job: nothing on the hot path.
///   A task suspended (awaiting a timer, a future, I/O) is not in flight; its next job is.
/// - On the main queue (`.mainActor` deliveries): each block FutureLib queues there, from its
///   submission until it has run. Counted only once a ``ManualClock`` exists in the process
///   (one relaxed load per delivery to the main queue otherwise).
///
/// Not waited for: blocks and tasks the caller queues itself (its own `DispatchQueue`s, `Task`s,
/// actors), and async closures on `.mainActor` (tasks on the main actor's executor).
enum Settling {
    private static let installOnce: Void = Quiescence.install { await Settling.settle() }

    /// Hands the wait to `ManualClock` (once; later calls do nothing).
    static func install() {
        _ = installOnce
    }

    /// Returns once the pool and the main-queue deliveries are idle together: the pool idle, then
    /// the main deliveries, then the pool still idle with no submission in between (so no pool
    /// job ran meanwhile that could have queued a delivery or been queued by one).
    static func settle() async {
        let pool = WorkerPool.shared
        while true {
            let submissions = await withUnsafeContinuation { continuation in
                pool.whenIdle { continuation.resume(returning: $0) }
            }
            await MainDeliveries.idle()
            if pool.isIdle(since: submissions) { return }
        }
    }
}

/// The blocks FutureLib queues on the main queue and that have not yet run, counted while a
/// ``ManualClock`` exists (see ``Settling``).
enum MainDeliveries: Sendable {
    private struct State {
        var inFlight = 0
        var waiters: [UnsafeContinuation<Void, Never>] = []
    }

    private static let state = Lock(State())

    /// Queues `work` on `main` (the main queue), counted while it is in flight if a manual clock
    /// exists.
    static func async(onMain main: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        guard Quiescence.manualClockCreated else {
            main.async(execute: work)
            return
        }
        Settling.install()
        state.withLock { $0.inFlight += 1 }
        main.async {
            work()
            let waiters = state.withLock { state -> [UnsafeContinuation<Void, Never>] in
                state.inFlight -= 1
                guard state.inFlight == 0 else { return [] }
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }  // outside the lock
        }
    }

    /// Returns once no counted block is in flight.
    static func idle() async {
        await withUnsafeContinuation { continuation in
            let now = state.withLock { state in
                guard state.inFlight > 0 else { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
