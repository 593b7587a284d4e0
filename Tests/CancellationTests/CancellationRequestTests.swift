import Cancellation
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationRequestTests {
    // MARK: - State

    @Test func `a new request is not cancelled and its token can be cancelled`() {
        let request = CancellationRequest()
        #expect(!request.isCancellationRequested)
        #expect(!request.token.isCancellationRequested)
        #expect(request.token.canBeCancelled)
    }

    @Test func `cancel sets isCancellationRequested on the request and every token`() {
        let request = CancellationRequest()
        let token = request.token
        request.cancel()
        #expect(request.isCancellationRequested)
        #expect(token.isCancellationRequested)
        #expect(request.token.isCancellationRequested)
        #expect(token.canBeCancelled)
    }

    @Test func `isCancellationRequested turns true before the handlers run`() {
        let request = CancellationRequest()
        let seen = Locked<Bool?>(nil)
        request.token.onCancel { seen.withLock { $0 = request.isCancellationRequested } }
        request.cancel()
        #expect(seen.value == true)
    }

    // MARK: - Handlers: exactly once, synchronously, LIFO

    @Test func `cancel runs every registered handler exactly once`() async {
        let request = CancellationRequest()
        await confirmation(expectedCount: 100) { ran in
            for _ in 0..<100 { request.token.onCancel { ran() } }
            request.cancel()
            request.cancel()  // idempotent: runs nothing again
        }
    }

    @Test func `cancel is idempotent`() {
        let request = CancellationRequest()
        let runs = Counter()
        request.token.onCancel { runs.increment() }
        request.cancel()
        request.cancel()
        request.cancel()
        #expect(runs.value == 1)
    }

    @Test func `handlers run before cancel returns, on the thread that calls cancel`() async {
        let request = CancellationRequest()
        let handlerThreads = Locked<[pthread_t]>([])
        for _ in 0..<3 {
            request.token.onCancel { handlerThreads.withLock { $0.append(currentThreadID()) } }
        }
        let (cancellingThread, countWhenCancelReturned) = await onDedicatedThread {
            request.cancel()
            return (currentThreadID(), handlerThreads.value.count)
        }
        #expect(countWhenCancelReturned == 3)
        #expect(handlerThreads.value.allSatisfy { pthread_equal($0, cancellingThread) != 0 })
    }

    @Test func `handlers run newest registration first (LIFO)`() {
        let request = CancellationRequest()
        let order = Locked<[Int]>([])
        for index in 0..<100 {
            request.token.onCancel { order.withLock { $0.append(index) } }
        }
        request.cancel()
        #expect(order.value == Array((0..<100).reversed()))
    }

    @Test func `LIFO order holds when registrations in between were removed and slots reused`() {
        let request = CancellationRequest()
        let order = Locked<[Int]>([])
        var registrations: [CancellationRegistration] = []
        for index in 0..<10 {
            registrations.append(request.token.onCancel { order.withLock { $0.append(index) } })
        }
        for index in [1, 4, 5, 9] { #expect(registrations[index].unregister()) }
        for index in 10..<13 {
            request.token.onCancel { order.withLock { $0.append(index) } }
        }
        request.cancel()
        #expect(order.value == [12, 11, 10, 8, 7, 6, 3, 2, 0])
    }

    // MARK: - Handlers may re-enter (no lock held while they run)

    @Test func `a handler may register on its own token: the new handler runs at once`() {
        let request = CancellationRequest()
        let events = Locked<[String]>([])
        request.token.onCancel {
            events.withLock { $0.append("outer begins") }
            let registration = request.token.onCancel { events.withLock { $0.append("inner") } }
            #expect(!registration.unregister())
            events.withLock { $0.append("outer ends") }
        }
        request.cancel()
        #expect(events.value == ["outer begins", "inner", "outer ends"])
    }

    @Test func `a handler may unregister a pending handler of the same request, which then never runs`() {
        let request = CancellationRequest()
        let olderRan = Counter()
        let older = request.token.onCancel { olderRan.increment() }
        let unregistered = Locked<Bool?>(nil)
        request.token.onCancel { unregistered.withLock { $0 = older.unregister() } }
        request.cancel()
        #expect(unregistered.value == true)
        #expect(olderRan.value == 0)
    }

    @Test func `a handler may unregister itself and unregisterAndWait itself without deadlock`() {
        let request = CancellationRequest()
        let registration = Locked<CancellationRegistration?>(nil)
        let results = Locked<[Bool]>([])
        registration.withLock {
            $0 = request.token.onCancel {
                let own = registration.value!
                results.withLock { $0.append(own.unregister()) }
                own.unregisterAndWait()  // returns at once: we are the running handler
                results.withLock { $0.append(true) }
            }
        }
        request.cancel()
        #expect(results.value == [false, true])
    }

    @Test func `a handler may cancel its own request again without deadlock`() {
        let request = CancellationRequest()
        let runs = Counter()
        request.token.onCancel {
            runs.increment()
            request.cancel()
        }
        request.cancel()
        #expect(runs.value == 1)
    }

    @Test func `a handler may cancel, register on and unregister from other requests`() {
        let first = CancellationRequest()
        let second = CancellationRequest()
        let third = CancellationRequest()
        let events = Locked<[String]>([])
        let thirdRegistration = third.token.onCancel { events.withLock { $0.append("third") } }
        second.token.onCancel {
            events.withLock { $0.append("second") }
            first.cancel()  // cancelling back into a request that is cancelling: no effect, no deadlock
        }
        first.token.onCancel {
            events.withLock { $0.append("first") }
            third.token.onCancel { events.withLock { $0.append("stored on third") } }
            events.withLock { $0.append("unregistered third: \(thirdRegistration.unregister())") }
            second.cancel()
        }
        first.cancel()
        #expect(events.value == ["first", "unregistered third: true", "second"])
        third.cancel()
        #expect(events.value.last == "stored on third")
        #expect(events.value.count == 4)
    }

    @Test func `a handler registered while cancel runs on another thread runs once, on the registering thread`() async {
        let request = CancellationRequest()
        let inHandler = Signal()
        let release = Signal()
        request.token.onCancel {
            inHandler.fire()
            release.wait()
        }
        let canceller = Task { await onDedicatedThread { request.cancel() } }
        let outcome = await onDedicatedThread { () -> (ranOnRegisteringThread: Bool, runs: Int) in
            inHandler.wait()
            let probe = RunProbe()  // created on the registering thread
            request.token.onCancel(probe.handler)
            release.fire()
            return (probe.ranOnRegisteringThread, probe.runCount)
        }
        await canceller.value
        #expect(outcome.runs == 1)
        #expect(outcome.ranOnRegisteringThread)
    }

    // MARK: - Lifetime

    @Test func `handlers and their captures are released once they ran`() {
        let request = CancellationRequest()
        let counter = DeinitCounter()
        for _ in 0..<10 {
            let tracked = counter.make()
            request.token.onCancel { tracked.touch() }
        }
        #expect(counter.deallocated == 0)
        request.cancel()
        #expect(counter.deallocated == 10)
    }

    @Test func `a request deallocated without being cancelled releases its handlers without running them`() {
        let counter = DeinitCounter()
        let runs = Counter()
        var request: CancellationRequest? = CancellationRequest()
        let token = request!.token
        for _ in 0..<10 {
            let tracked = counter.make()
            token.onCancel {
                tracked.touch()
                runs.increment()
            }
        }
        #expect(counter.deallocated == 0)
        request = nil
        #expect(counter.deallocated == 10)
        #expect(runs.value == 0)
        #expect(!token.canBeCancelled)
        #expect(!token.isCancellationRequested)
    }

    @Test func `tokens do not keep their request alive`() {
        var request: CancellationRequest? = CancellationRequest()
        let probe = WeakProbe(request!)
        let token = request!.token
        request = nil
        #expect(!probe.isAlive)
        #expect(!token.canBeCancelled)
    }

    @Test func `a cancelled request deallocated later leaves its tokens cancelled`() {
        var request: CancellationRequest? = CancellationRequest()
        let token = request!.token
        request!.cancel()
        request = nil
        #expect(token.isCancellationRequested)
        #expect(token.canBeCancelled)
    }
}
