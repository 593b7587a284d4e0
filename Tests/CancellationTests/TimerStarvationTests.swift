import Cancellation
import Dispatch
import TestSupport
import Testing

/// User code that blocks the threads of `DispatchQueue.global()` (a pool of about one thread per
/// core) must not stop `cancel(after:)` from firing. Timers run on FutureLib's own serial queue,
/// which Dispatch serves from its overcommit pool: it gets a thread whatever the global queue is
/// doing. (With timers on the global queue, libdispatch usually added threads, but the suite saw
/// a 50 ms timer wait more than 10 s while other tests blocked and flooded that queue.)
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
