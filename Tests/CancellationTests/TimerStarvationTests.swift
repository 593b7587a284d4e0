import Cancellation
import Dispatch
import TestSupport
import Testing

/// User code that blocks the threads of `DispatchQueue.global()` (a pool of about one thread per
/// core) must not stop `cancel(after:)` from firing. Timers run on FutureLib's own serial queue,
/// which Dispatch serves from its overcommit pool: it gets a thread whatever the global queue is
/// doing. (With timers on the global queue, libdispatch usually added threads, but a timer could
/// wait far past its deadline while other tests blocked and flooded that queue.)
///
/// ### Holding the pool as briefly as possible
/// On Linux, Swift's cooperative pool *is* the global queue's thread pool, so while the blockers
/// run, no task of the whole test process (of any suite) can run. The test therefore does all of
/// its work on a dedicated thread and releases the blockers as soon as the timer fired: the pool
/// is held for milliseconds. (Written as an async body that awaited between blocking and
/// releasing, it needed a free cooperative thread to resume, which it got only after libdispatch
/// had added a thread for every queued blocker, about one a second: the first trivial tests of a
/// `make test` run then waited about 7 s to start.)
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(3))))
struct TimerStarvationTests {
    @Test func `a timer fires while user code blocks every thread of the global queue`() async {
        let (blocked, fired) = await onDedicatedThread { () -> (Bool, Bool) in
            let blockers = WorkerCount.cores * 4
            let release = DispatchSemaphore(value: 0)
            let started = Counter()
            for _ in 0..<blockers {
                DispatchQueue.global().async {
                    started.increment()
                    release.wait()
                }
            }
            defer { for _ in 0..<blockers { release.signal() } }
            // Every thread the global pool will give is blocked soon (it has `cores` of them). The
            // threads may be busy with other suites' work first, and a loaded machine stretches that
            // (load-scaled: a fixed 30 s could run out beside other builds).
            _ = blockUntil(seconds: 60) { started.value >= WorkerCount.cores }
            guard started.value >= WorkerCount.cores else { return (false, false) }
            let request = CancellationRequest(cancelAfter: .milliseconds(1))
            // A stall lasts until the blockers go, after this returns: 60 s of a quiet machine, load-scaled,
            // is for a loaded one (and bounds how long a failing run holds the global queue).
            return (true, blockUntil(seconds: 60) { request.token.wait(timeout: .seconds(1)) })
        }
        #expect(blocked, "the blockers never occupied the global queue's threads")
        #expect(fired, "the timer stalled until the global queue's threads were free")
    }
}
