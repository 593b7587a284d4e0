import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct ExecutionContextTests {
    @Test func `.synchronous runs work on the calling thread before execute returns`() {
        let thread = ThreadID.current
        let ranHere = Locked<Bool?>(nil)
        SynchronousExecutionContext().execute { ranHere.withLock { $0 = ThreadID.current == thread } }
        #expect(ranHere.value == true)
    }

    @Test func `.synchronous nested a million levels deep does not overflow the stack`() async {
        let remaining = await onDedicatedThread { () -> Int in
            let remaining = Locked(Scale.million)
            @Sendable func step() {
                let more = remaining.withLock { count -> Bool in
                    count -= 1
                    return count > 0
                }
                if more { SynchronousExecutionContext().execute(step) }
            }
            SynchronousExecutionContext().execute(step)
            return remaining.value  // all ran before the outermost execute returned
        }
        #expect(remaining == 0)
    }

    @Test func `.synchronous runs nested work in submission order`() {
        let order = Locked<[Int]>([])
        SynchronousExecutionContext().execute {
            order.withLock { $0.append(0) }
            SynchronousExecutionContext().execute { order.withLock { $0.append(1) } }
            SynchronousExecutionContext().execute { order.withLock { $0.append(2) } }
        }
        #expect(order.value == [0, 1, 2])
    }

    @Test func `.default runs every job exactly once`() async {
        await confirmation(expectedCount: 100) { ran in
            let done = Counter()
            let all = Signal()
            for _ in 0..<100 {
                DefaultExecutionContext().execute {
                    ran()
                    if done.increment() == 100 { all.fire() }
                }
            }
            #expect(await onDedicatedThread { all.wait() })
        }
    }

    @Test func `.default releases a finished job before it takes its lock again`() async {
        // The job holds the only reference to a promise: releasing it breaks the promise, whose
        // `.synchronous` continuation submits to `.default` — a deadlock if that ran under the lock.
        let released = Signal()
        for _ in 0..<20 {
            let promise = Promise<Int>()
            promise.future.onFailure(on: .synchronous) { _ in
                DefaultExecutionContext().execute { released.fire() }
            }
            DefaultExecutionContext().execute { withExtendedLifetime(promise) {} }
        }
        #expect(await onDedicatedThread { (0..<20).allSatisfy { _ in released.wait() } })
    }

    @Test func `a DispatchQueue runs work on itself`() async {
        let probe = ProbedQueue()
        let seen = Locked<[Bool]>([])
        let context: any ExecutionContext = probe.queue
        context.execute {
            dispatchPrecondition(condition: .onQueue(probe.queue))
            seen.withLock { $0.append(probe.isCurrent) }
        }
        await probe.drain()
        #expect(seen.value == [true])
    }

    @Test func `a serial DispatchQueue runs work in submission order`() async {
        let probe = ProbedQueue()
        let order = Locked<[Int]>([])
        for index in 0..<200 { probe.queue.execute { order.withLock { $0.append(index) } } }
        await probe.drain()
        #expect(order.value == Array(0..<200))
    }
}
