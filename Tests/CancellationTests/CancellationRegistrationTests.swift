import Cancellation
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationRegistrationTests {
    // MARK: - unregister

    @Test func `unregister before cancel returns true and the handler never runs`() {
        let request = CancellationRequest()
        let runs = Counter()
        let registration = request.token.onCancel { runs.increment() }
        #expect(registration.unregister())
        request.cancel()
        #expect(runs.value == 0)
    }

    @Test func `unregister twice is a no-op that returns false`() {
        let request = CancellationRequest()
        let registration = request.token.onCancel {}
        #expect(registration.unregister())
        #expect(!registration.unregister())
        #expect(!registration.unregister())
    }

    @Test func `unregister after the handler ran returns false`() {
        let request = CancellationRequest()
        let runs = Counter()
        let registration = request.token.onCancel { runs.increment() }
        request.cancel()
        #expect(!registration.unregister())
        #expect(runs.value == 1)
    }

    @Test func `unregister after the request was deallocated returns false`() {
        var request: CancellationRequest? = CancellationRequest()
        let registration = request!.token.onCancel {}
        request = nil
        #expect(!registration.unregister())
    }

    @Test func `unregister removes only its own handler`() {
        let request = CancellationRequest()
        let ran = Locked<[Int]>([])
        let registrations = (0..<3).map { index in
            request.token.onCancel { ran.withLock { $0.append(index) } }
        }
        #expect(registrations[1].unregister())
        request.cancel()
        #expect(ran.value == [2, 0])
    }

    @Test func `a stale registration cannot remove the handler that reused its slot`() {
        let request = CancellationRequest()
        let runs = Counter()
        let stale = request.token.onCancel {}
        #expect(stale.unregister())
        let fresh = request.token.onCancel { runs.increment() }  // reuses the freed slot
        #expect(stale != fresh)
        #expect(!stale.unregister())
        stale.unregisterAndWait()
        request.cancel()
        #expect(runs.value == 1)
    }

    @Test func `unregister releases the handler and its captures at once`() {
        let request = CancellationRequest()
        let counter = DeinitCounter()
        let registration: CancellationRegistration
        do {
            let tracked = counter.make()
            registration = request.token.onCancel { tracked.touch() }
        }
        #expect(counter.deallocated == 0)
        #expect(registration.unregister())
        #expect(counter.deallocated == 1)
    }

    @Test func `unregisterAndWait of a pending handler removes and releases it`() {
        let request = CancellationRequest()
        let counter = DeinitCounter()
        let runs = Counter()
        let registration: CancellationRegistration
        do {
            let tracked = counter.make()
            registration = request.token.onCancel {
                tracked.touch()
                runs.increment()
            }
        }
        registration.unregisterAndWait()
        #expect(counter.deallocated == 1)
        request.cancel()
        #expect(runs.value == 0)
        #expect(!registration.unregister())
    }

    // A handler is released after the request's lock: its captures' `deinit`s are user code, which
    // may unregister another registration of the same request (inside the lock, a deadlock). Release
    // builds (`make test-release`) are the ones that could release it inside the lock.

    @Test func `unregister releases the handler outside the request's lock`() {
        let request = CancellationRequest()
        let (registration, other) = UnregistersOnDeinit.handler { request.token.onCancel($0) }
        #expect(registration.unregister())  // releases the handler: its capture unregisters `other`
        #expect(!other.unregister())
    }

    @Test func `unregisterAndWait releases the handler outside the request's lock`() {
        let request = CancellationRequest()
        let (registration, other) = UnregistersOnDeinit.handler { request.token.onCancel($0) }
        registration.unregisterAndWait()
        #expect(!other.unregister())
    }

    @Test func `registrations on none and on a cancelled token are inert`() {
        let onNone = CancellationToken.none.onCancel {}
        let onCancelled = CancellationToken.cancelled.onCancel {}
        #expect(!onNone.unregister())
        #expect(!onCancelled.unregister())
        onNone.unregisterAndWait()
        onCancelled.unregisterAndWait()
    }

    // MARK: - O(1) unregister (structural)

    @Test func `a million registrations unregister in random order`() async {
        // Seconds of work: on a dedicated thread, not the cooperative pool the other tests need.
        let (removed, runs) = await onHeavyThread { () -> (Int, Int) in
            let request = CancellationRequest()
            let runs = Counter()
            var registrations = (0..<Scale.million).map { _ in request.token.onCancel { runs.increment() } }
            var generator = SystemRandomNumberGenerator()
            registrations.shuffle(using: &generator)
            var removed = 0
            for registration in registrations where registration.unregister() { removed += 1 }
            request.cancel()
            return (removed, runs.value)
        }
        #expect(removed == Scale.million)
        #expect(runs == 0)
    }

    // MARK: - unregisterAndWait

    @Test func `unregisterAndWait from inside the running handler returns at once`() async {
        let request = CancellationRequest()
        let registration = Locked<CancellationRegistration?>(nil)
        let reachedEnd = Counter()
        registration.withLock {
            $0 = request.token.onCancel {
                registration.value!.unregisterAndWait()
                reachedEnd.increment()
            }
        }
        await onDedicatedThread { request.cancel() }
        #expect(reachedEnd.value == 1)
    }

    @Test func `unregisterAndWait from a nested cancellation's handler returns at once`() async {
        // Thread T runs `outer`'s handler, which cancels `inner`, whose handler waits for the
        // outer handler: it is running on this very thread, so waiting would deadlock.
        let outer = CancellationRequest()
        let inner = CancellationRequest()
        let outerRegistration = Locked<CancellationRegistration?>(nil)
        let reachedEnd = Counter()
        inner.token.onCancel {
            outerRegistration.value!.unregisterAndWait()
            reachedEnd.increment()
        }
        outerRegistration.withLock { $0 = outer.token.onCancel { inner.cancel() } }
        await onDedicatedThread { outer.cancel() }
        #expect(reachedEnd.value == 1)
    }

    @Test func `unregisterAndWait returns only after the handler running on another thread finished`() async {
        let request = CancellationRequest()
        let handlerStarted = Signal()
        let waiterIsAboutToWait = Signal()
        let handlerFinished = Locked(false)
        let registration = request.token.onCancel {
            handlerStarted.fire()
            waiterIsAboutToWait.wait()
            pause(.milliseconds(100))  // widen the window in which a non-waiting call would return early
            handlerFinished.withLock { $0 = true }
        }
        async let cancelled: Void = onDedicatedThread { request.cancel() }
        let finishedWhenReturned = await onDedicatedThread { () -> Bool in
            handlerStarted.wait()
            waiterIsAboutToWait.fire()
            registration.unregisterAndWait()
            return handlerFinished.value
        }
        await cancelled
        #expect(finishedWhenReturned)
    }

    /// Where the two handlers of the test below are stored.
    enum Storage: CaseIterable, Sendable {
        /// The request's one list.
        case ownList
        /// The stripes of a request that has them.
        case stripes
        /// The own list of a request that got stripes after they were registered (run after the stripes).
        case ownListOfStriped
    }

    /// What `withCancellation` relies on: its handler's closure holds the current task, which may be an `async let`
    /// child whose memory goes with its scope. So the closure must be gone by the time `unregisterAndWait()` returns,
    /// not released later by the cancelling thread (after the older handlers it still runs).
    @Test(arguments: Storage.allCases)
    func `a handler that ran is released before unregisterAndWait returns, while cancel() runs older handlers`(
        storage: Storage
    ) async {
        let deinits = DeinitCounter()
        let request = CancellationRequest()
        if storage == .stripes { #expect(request.token.stripeRegistrations()) }
        let olderStarted = Signal()
        let release = Signal()
        request.token.onCancel {  // the older handler: runs second, and holds cancel() until released
            olderStarted.fire()
            release.wait()
        }
        let tracked = deinits.make()
        let registration = request.token.onCancel { tracked.touch() }  // the newest: runs first
        _ = consume tracked
        if storage == .ownListOfStriped { #expect(request.token.stripeRegistrations()) }
        async let cancelled: Void = onDedicatedThread { request.cancel() }
        let releasedWhenReturned = await onDedicatedThread { () -> Int in
            olderStarted.wait()  // the newest handler has returned
            registration.unregisterAndWait()
            let released = deinits.deallocated
            release.fire()
            return released
        }
        await cancelled
        #expect(releasedWhenReturned == 1)
        #expect(deinits.deallocated == 1)
    }

    @Test func `unregister never blocks on a handler running on another thread`() async {
        let request = CancellationRequest()
        let handlerStarted = Signal()
        let release = Signal()
        let registration = request.token.onCancel {
            handlerStarted.fire()
            release.wait()
        }
        async let cancelled: Void = onDedicatedThread { request.cancel() }
        let result = await onDedicatedThread { () -> Bool in
            handlerStarted.wait()
            let result = registration.unregister()  // would hang here (until the time limit) if it blocked
            release.fire()
            return result
        }
        await cancelled
        #expect(result == false)
    }

    // MARK: - Task-local inheritance must not fool unregisterAndWait

    @Test func `unregisterAndWait from a Task started by an earlier handler still waits for the running handler`() async
    {
        // Handler `first` (newest, runs first) starts a Task; the Task calls unregisterAndWait on
        // `second` while `second` runs on the cancelling thread. The Task runs on another thread, so it must wait.
        let request = CancellationRequest()
        let secondStarted = Signal()
        let waiterIsAboutToWait = Signal()
        let secondFinished = Locked(false)
        let outcome = Locked<Bool?>(nil)
        let done = Signal()
        let second = request.token.onCancel {
            secondStarted.fire()
            waiterIsAboutToWait.wait()
            pause(.milliseconds(100))
            secondFinished.withLock { $0 = true }
        }
        request.token.onCancel {
            Task {
                await onDedicatedThread { secondStarted.wait() }
                waiterIsAboutToWait.fire()
                second.unregisterAndWait()
                outcome.withLock { $0 = secondFinished.value }
                done.fire()
            }
        }
        await onDedicatedThread { request.cancel() }
        await onDedicatedThread { done.wait() }
        #expect(outcome.value == true)
    }

    // MARK: - Equatable, Hashable

    @Test func `a registration equals its copies and differs from others`() {
        let request = CancellationRequest()
        let first = request.token.onCancel {}
        let copy = first
        let second = request.token.onCancel {}
        let elsewhere = CancellationRequest().token.onCancel {}
        #expect(first == copy)
        #expect(first.hashValue == copy.hashValue)
        #expect(first != second)
        #expect(first != elsewhere)
        #expect(Set([first, copy, second, elsewhere]).count == 3)
    }

    @Test func `inert registrations are equal to each other`() {
        let onNone = CancellationToken.none.onCancel {}
        let onCancelled = CancellationToken.cancelled.onCancel {}
        #expect(onNone == onCancelled)
        #expect(Set([onNone, onCancelled]).count == 1)
    }

    // MARK: - Where handlers are stored (the first two in the request, the others in a slab)

    @Test(arguments: [1, 2, 3, 5])
    func `handlers whose release notifies are each called once, uncancelled, when their request is released unrun`(
        count: Int
    ) {
        let calls = Locked([Int: Int]())
        let cancelledAtCall = Counter()
        do {
            let request = CancellationRequest()
            let token = request.token
            for index in 0..<count {
                _ = token.onCancelOrRelease {
                    if token.isCancellationRequested { cancelledAtCall.increment() }
                    calls.withLock { $0[index, default: 0] += 1 }
                }
            }
        }
        #expect(calls.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<count).map { ($0, 1) }))
        #expect(cancelledAtCall.value == 0)
    }

    @Test func `a request released with its handlers all unregistered frees its slab at once, while a token lives`() {
        let notified = Counter()
        let token: CancellationToken
        do {
            let request = CancellationRequest()
            token = request.token
            let registrations = (0..<3).map { _ in token.onCancelOrRelease { notified.increment() } }
            for registration in registrations { #expect(registration.unregister()) }
            #expect(token.registrationCount == 0)
            #expect(token.hasHandlerSlab, "three handlers at once take the slab")
        }
        #expect(!token.canBeCancelled)
        #expect(!token.hasHandlerSlab, "the abandoned request let go of its slab")
        #expect(notified.value == 0, "unregistered handlers are not notified of the release")
    }

    @Test(arguments: [[1], [0, 3], [1, 3, 4], [0, 1, 2, 3, 4]])
    func `slots freed by unregister, in the request or in the slab, are reused and cancel runs the rest newest first`(
        removed: [Int]
    ) {
        let request = CancellationRequest()
        let order = Locked([String]())
        var registrations: [CancellationRegistration] = []
        for name in ["a", "b", "c", "d", "e"] {
            registrations.append(request.token.onCancel { order.withLock { $0.append(name) } })
        }
        for index in removed { #expect(registrations[index].unregister()) }
        for name in ["f", "g", "h"] {
            registrations.append(request.token.onCancel { order.withLock { $0.append(name) } })
        }
        #expect(!registrations[removed[0]].unregister())  // a stale key never removes the slot's new handler
        request.cancel()
        let kept = ["a", "b", "c", "d", "e"].enumerated().filter { !removed.contains($0.offset) }.map(\.element)
        #expect(order.withLock { $0 } == (kept + ["f", "g", "h"]).reversed())
    }
}
