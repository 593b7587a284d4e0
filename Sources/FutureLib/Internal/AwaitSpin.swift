import FutureLibConcurrencyHelpers
import Synchronization

/// A short watch for a pending future's result before an `await future.value()` suspends.
///
/// A suspended task is resumed through its executor: for a task on Swift's cooperative pool,
/// the completing thread enqueues it there and the pool wakes one of its parked threads, a kernel
/// wake-up that costs microseconds. The `Future { async }` that a task awaits is
/// often complete within microseconds on FutureLib's pool (its own threads spin between jobs),
/// so watching for the result for up to ``nanoseconds`` (polling the future's atomic phase,
/// yielding the core between rounds of polls, see ``spin(upTo:until:)``) saves that wake-up, and
/// the wait's allocations (the continuation's callback and its cancellable box).
///
/// What it buys is guarded by `RoundsDriver 9-task` (one `Future { async }` awaited at a time
/// against `Task { }`), with the pool's rule that lets its only awake thread keep spinning (see
/// ``WorkerPool``, Spinning); the figures are in Documentation/Internals.md ("The worker pool and
/// `Future { async … }`").
///
/// ### When it does not watch
/// - On one processor (also under `taskset -c 0` or a container's 1-CPU limit: see
///   `CurrentProcessor.count`), where the watcher would only delay the thread that completes the
///   future.
/// - On FutureLib's own threads: a task there suspends and leaves the thread to the pool's jobs,
///   among them, maybe, the one that completes the future.
/// - When the task is cancelled (the wait ends at once, as it always did).
/// - While another task waits in `value()` (watching, or suspended): with several tasks awaiting
///   at once, a watch holds its thread while the others, ready to run, wait for it: the watch pays
///   off for one task awaiting at a time, the case above.
/// - After a watch that missed (the future took longer), for the next ``skipsAfterMiss``
///   awaits on this thread: a program whose awaited futures take milliseconds spends at most
///   one watch per that many awaits.
///
/// The cost: up to 20 µs of the awaiting thread, which stays busy (with the core yielded between
/// rounds) instead of running another task; never a wait for anything but the clock.
@usableFromInline
package enum AwaitSpin: Sendable {
    /// How long a watch lasts at most; 0 (never) on one processor. The pool's spin, for the same
    /// reason: the wake-up it saves costs about that much.
    static let nanoseconds = WorkerPool.spinNanoseconds

    /// How many awaits on a thread skip the watch after one that missed.
    static let skipsAfterMiss = 64

    /// How many tasks wait in `value()` right now, watching or suspended: from ``watch(until:)``
    /// to ``endWait()``. One atomic add each way per wait of a pending future (against a
    /// suspension's microseconds); a wait of a complete future never gets here.
    static let waiters = Atomic<Int>(0)

    /// Counts the caller as waiting (until its ``endWait()``), and watches `done` for up to
    /// ``nanoseconds`` unless the rules above say not to; returns whether it became true.
    @usableFromInline
    package static func watch(until done: () -> Bool) -> Bool {
        let othersWait = waiters.wrappingAdd(1, ordering: .relaxed).oldValue > 0
        guard nanoseconds > 0, !othersWait else { return false }
        return PerThread.withCurrent { thread in
            if thread.pool != nil { return false }
            if thread.awaitWatchesToSkip > 0 {
                thread.awaitWatchesToSkip -= 1
                return false
            }
            if Task.isCancelled { return false }
            if spin(upTo: nanoseconds, until: done).seen { return true }
            thread.awaitWatchesToSkip = skipsAfterMiss
            return false
        }
    }

    /// The caller, counted by ``watch(until:)``, no longer waits (it has the result, or was cancelled).
    @usableFromInline
    package static func endWait() {
        waiters.wrappingSubtract(1, ordering: .relaxed)
    }
}
