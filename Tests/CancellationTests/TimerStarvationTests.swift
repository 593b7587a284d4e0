import Cancellation
import Dispatch
import TestSupport
import Testing

/// Timers fire on `DispatchQueue.global()`, a non-overcommit queue whose pool starts with one
/// thread per core. User code that blocks those threads must not stop `cancel(after:)` from
/// firing. It does not on Linux: when the global pool's threads block, libdispatch's workqueue
/// monitor adds threads (all `cores * 4` blockers below get a thread, and the timer still fires,
/// in about a millisecond on the 2-core CI machine). The test keeps it that way if timers ever
/// move to a capped executor.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct TimerStarvationTests {
    @Test func `a timer fires while user code blocks every thread of the global queue`() async {
        let blockers = WorkerCount.cores * 4
        let release = DispatchSemaphore(value: 0)
        let started = Counter()
        for _ in 0..<blockers {
            DispatchQueue.global().async {
                started.increment()
                release.wait()
            }
        }
        // Every thread the global pool will give is blocked now (it has `cores` of them).
        #expect(await eventually { started.value >= WorkerCount.cores })
        let request = CancellationRequest(cancelAfter: .milliseconds(1))
        let fired = await onDedicatedThread { request.token.wait(timeout: .seconds(5)) }
        for _ in 0..<blockers { release.signal() }
        #expect(fired, "the timer stalled until the global queue's threads were free")
    }
}
