import Foundation
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// The pool behind `.default` and `Future { async … }` (`Internal/WorkerPool.swift`), seen through
/// `.default`: its wake-ups (one signal per burst, passed on by the woken thread) lose no job.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
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
    @Test(.timeLimit(.minutes(HangLimit.minutes(1))))
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

    // The same guard for the paths around the spin: a job that comes back while a thread spins,
    // just after its spin ran out, just after a burst (no spin), or long after (every thread
    // asleep). Each lost wake-up costs a sleeping thread's 5-second timeout, and a few of them
    // overrun the time limit (ten minutes when `FUTURELIB_STRESS_ITERATIONS` raises the rounds).
    @Test(.timeLimit(.minutes(HangLimit.minutes(1))))
    func `jobs submitted one at a time, at every distance from the last, each run`() async {
        let pauses: [Duration] = [.zero, .microseconds(5), .microseconds(15), .microseconds(30), .microseconds(200)]
        let rounds = max(Stress.cheap / 5, 500)
        let missed = await onDedicatedThread {
            var missed = 0
            for round in 0..<rounds {
                let ran = Signal()
                DefaultExecutionContext().execute { ran.fire() }
                if !ran.wait() { missed += 1 }
                let gap = pauses[round % pauses.count]
                if gap > .zero { pause(gap) }
                if round.isMultiple(of: 250) { pause(.milliseconds(2)) }  // every thread asleep
            }
            return missed
        }
        #expect(missed == 0)
    }

    // Bursts from outside and from the pool's own threads (a job that queues two more) after the
    // pool went idle: the one wake-up in flight must fan out to every job.
    @Test(.timeLimit(.minutes(HangLimit.minutes(1))))
    func `bursts from outside and from inside the pool after it went idle all run`() async {
        let rounds = max(Stress.heavy / 5, 100)
        let submitters = 3
        let lost = await onDedicatedThread {
            var lost = 0
            for round in 0..<rounds {
                let expected = submitters * 3
                let done = Counter()
                let all = Signal()
                @Sendable func finishOne() { if done.increment() == expected { all.fire() } }
                let start = SpinBarrier(parties: submitters)
                let threads = (0..<submitters).map { _ in
                    Thread {
                        start.arriveAndWait()
                        DefaultExecutionContext().execute {
                            DefaultExecutionContext().execute { finishOne() }
                            DefaultExecutionContext().execute { finishOne() }
                            finishOne()
                        }
                    }
                }
                for thread in threads { thread.start() }
                if !all.wait() { lost += 1 }
                if round.isMultiple(of: 3) { pause(.microseconds(50 * (round % 7))) }
            }
            return lost
        }
        #expect(lost == 0)
    }

    // `Future { async }` tasks start inside a job of the pool (`Task.immediate`): one that blocks
    // its thread in `value()` must still get a compensating thread for the work it waits for, or
    // a chain deeper than the pool has threads deadlocks.
    @Test func `Future { async } bodies blocking on each other, nested deeper than cores, finish`() async throws {
        let levels = 4 * WorkerCount.cores + 4
        @Sendable func nested(_ level: Int) -> Future<Int> {
            Future { () async throws -> Int in
                guard level > 0 else { return 0 }
                return try blockingValue(of: nested(level - 1)) + 1
            }
        }
        #expect(try await nested(levels).value() == levels)
    }

    @Test func `Future { async } work started in a burst all completes`() async throws {
        let futures = (0..<10_000).map { index in Future { () async throws -> Int in index } }
        #expect(try await futures.sequence().value() == Array(0..<10_000))
    }
}

/// `value()` from synchronous code: what a `Future { async }` body does when it calls a blocking
/// helper.
private func blockingValue<T>(of future: Future<T>) throws -> T {
    try future.value(timeout: HangLimit.timeout(.seconds(60)))
}
