import FutureLib
import TestSupport
import Testing

/// The pool behind `.default` and `Future { async … }` (`Internal/WorkerPool.swift`), seen through
/// `.default`: its wake-ups (one signal per burst, passed on by the woken thread) lose no job.
@Suite(.timeLimit(.minutes(3)))
struct WorkerPoolTests {
    @Test func `a burst from several threads runs every job exactly once`() async {
        let threads = 4
        let perThread = 5_000
        let runs = (0..<threads * perThread).map { _ in Counter() }
        let finished = Counter()
        let all = Signal()
        await onThreads(threads) { thread in
            for index in thread * perThread..<(thread + 1) * perThread {
                DefaultExecutionContext().execute {
                    runs[index].increment()
                    if finished.increment() == threads * perThread { all.fire() }
                }
            }
        }
        #expect(await onDedicatedThread { all.wait() })
        #expect(runs.allSatisfy { $0.value == 1 })
    }

    // A lost wake-up would leave the job queued until a sleeping thread's 5-second timeout: 20
    // rounds of that overrun the time limit, so the limit is the hang guard here.
    @Test(.timeLimit(.minutes(1)))
    func `a job submitted after every thread went to sleep runs`() async {
        for _ in 0..<20 {
            let ran = Signal()
            let job = await onDedicatedThread {
                pause(.milliseconds(20))  // the pool's threads find nothing and go to sleep
                DefaultExecutionContext().execute { ran.fire() }
                return ran.wait()
            }
            #expect(job)
        }
    }

    @Test func `Future { async } work started in a burst all completes`() async throws {
        let futures = (0..<10_000).map { index in Future { () async throws -> Int in index } }
        #expect(try await futures.sequence().value() == Array(0..<10_000))
    }
}
