public import FutureLib
public import NIOCore
import Synchronization

extension EventLoop {
    /// Runs `task` on this loop after `delay`, unless `cancellationToken` is cancelled first; returns a future of
    /// its result.
    ///
    /// ```swift
    /// let shutdown = CancellationRequest()
    /// let ping = loop.scheduleTask(in: .seconds(30), cancellationToken: shutdown.token) { sendPing() }
    /// shutdown.cancel()  // the ping is never sent; `ping` fails with CancellationError
    /// ```
    ///
    /// ### Semantics
    /// - `task` runs at most once, on this loop's thread, no earlier than `delay` from now.
    /// - The returned future completes exactly once: with what `task` returns or throws, or with
    ///   `CancellationError` when the token wins. `CancellationError` means `task` has not run and never will; a
    ///   result means it ran to the end. There is no third outcome (a token cancelled while `task` runs is too
    ///   late: the result stands).
    ///
    /// ### Cancellation
    /// Cancelling the token before `task` starts fails the future at once, on the cancelling thread, and cancels
    /// the NIO `Scheduled` task, so the loop drops it (and the closure) instead of holding it until `delay`
    /// passes. A token that is already cancelled schedules nothing. The handler registered on the token is
    /// unregistered when `task` runs, so a long-lived token does not collect one per task.
    ///
    /// ### A loop that shuts down first
    /// NIO drops the tasks still scheduled on a loop that shuts down: `task` never runs, and the future fails
    /// with `FutureError.brokenPromise`.
    ///
    /// - Parameters:
    ///   - delay: How long to wait before running `task`; negative counts as zero.
    ///   - cancellationToken: Cancels the task if it has not started.
    ///   - task: The work to run on the loop.
    /// - Returns: A future of the task's result. It fails with `CancellationError` when the token was cancelled
    ///   before the task started, or with the error `task` throws.
    public func scheduleTask<T: Sendable>(
        in delay: TimeAmount,
        cancellationToken: CancellationToken,
        _ task: @escaping @Sendable () throws -> T
    ) -> Future<T> {
        scheduleTask(cancellationToken: cancellationToken, task) { scheduleTask(in: delay, $0) }
    }

    /// Runs `task` on this loop at `deadline`, unless `cancellationToken` is cancelled first; returns a future of
    /// its result.
    ///
    /// ```swift
    /// let deadline = NIODeadline.now() + .milliseconds(500)
    /// let flushed = loop.scheduleTask(deadline: deadline, cancellationToken: token) { flush() }
    /// ```
    ///
    /// ### Semantics
    /// As ``NIOCore/EventLoop/scheduleTask(in:cancellationToken:_:)``: `task` runs at most once, on this loop;
    /// the future completes exactly once, with `CancellationError` only if `task` never ran.
    ///
    /// - Parameters:
    ///   - deadline: When to run `task`; a deadline in the past runs it as soon as possible.
    ///   - cancellationToken: Cancels the task if it has not started.
    ///   - task: The work to run on the loop.
    /// - Returns: A future of the task's result. It fails with `CancellationError` when the token was cancelled
    ///   before the task started, or with the error `task` throws.
    public func scheduleTask<T: Sendable>(
        deadline: NIODeadline,
        cancellationToken: CancellationToken,
        _ task: @escaping @Sendable () throws -> T
    ) -> Future<T> {
        scheduleTask(cancellationToken: cancellationToken, task) { scheduleTask(deadline: deadline, $0) }
    }

    /// Schedules `task` with `schedule` and links it to the token through a three-state flag.
    private func scheduleTask<T: Sendable>(
        cancellationToken: CancellationToken,
        _ task: @escaping @Sendable () throws -> T,
        with schedule: (@escaping @Sendable () throws -> Void) -> Scheduled<Void>
    ) -> Future<T> {
        if cancellationToken.isCancellationRequested {
            return Future(error: CancellationError())
        }
        let promise = Promise<T>()
        // Who goes first, the loop starting `task` or the token, is decided by one compare-and-exchange, so that
        // `CancellationError` always means "never ran" and the loser does nothing.
        let state = ScheduledTaskState()
        let scheduled = schedule {
            guard state.start() else { return }
            promise.resolve(Result { try task() })
        }
        let registration = cancellationToken.onCancel {
            guard state.cancel() else { return }
            promise.reject(CancellationError())
            scheduled.cancel()  // the loop drops the closure now instead of at the deadline
        }
        // Runs inline once the future completes (or at once, if the token already won).
        promise.future.onComplete(on: .synchronous) { _ in registration.unregister() }
        return promise.future
    }
}

/// Pending until the loop starts the task or the token cancels it; whichever changes it first wins.
private final class ScheduledTaskState: Sendable {
    private static let pending = 0
    private static let started = 1
    private static let cancelled = 2

    private let value = Atomic(ScheduledTaskState.pending)

    /// Whether the loop may run the task (the token has not won).
    func start() -> Bool {
        // Acquiring/releasing: the winner's writes before this point are visible to the loser.
        value.compareExchange(expected: Self.pending, desired: Self.started, ordering: .acquiringAndReleasing).exchanged
    }

    /// Whether the token cancelled the task before the loop started it.
    func cancel() -> Bool {
        value.compareExchange(expected: Self.pending, desired: Self.cancelled, ordering: .acquiringAndReleasing)
            .exchanged
    }
}
