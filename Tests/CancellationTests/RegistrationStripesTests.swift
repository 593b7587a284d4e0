import Cancellation
import Foundation
import Synchronization
import TestSupport
import Testing

/// A token whose registrations went striped (`RegistrationStripes`: per-processor lists, each behind
/// a lock of its own), which a request gets once registrations found its lock contended. The tests
/// force the stripes with `stripeRegistrations()`, and place handlers in chosen stripes with
/// `onCancel(inStripe:)`. The guarantees are those of any token: newest first, exactly once, O(1)
/// unregister, `unregisterAndWait`, and nothing kept once the request can no longer be cancelled.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct RegistrationStripesTests {
    /// Appends handler numbers in the order they run.
    final class RunOrder: Sendable {
        private let order = Mutex<[Int]>([])
        func append(_ number: Int) { order.withLock { $0.append(number) } }
        var value: [Int] { order.withLock { $0 } }
    }

    // MARK: - When a request gets stripes

    @Test func `a token used from one thread never gets stripes`() {
        let request = CancellationRequest()
        for _ in 0..<10_000 { request.token.onCancel {}.unregister() }
        #expect(!request.token.isStriped)
    }

    @Test func `registrations that find the request's lock taken give it stripes, and every handler still runs once`()
        async
    {
        let request = CancellationRequest()
        let token = request.token
        let attempts = Counter()
        let runs = Counter()
        // Contention made certain rather than waited for: two threads registering at once find the lock
        // taken only while both run at the same time, which a busy machine may not let them do for minutes.
        // Here one thread holds the lock until the other has
        // begun a registration, and a little longer, so that registration finds it taken; the striping
        // threshold's worth of rounds gives the stripes.
        await onThreads(2) { thread in
            if thread == 0 {
                while !token.isStriped {
                    let seen = attempts.value
                    token.holdingRegistrationLock {
                        // Bounded: the other thread may be waiting for this lock to finish its previous round.
                        let until = ContinuousClock.now + .milliseconds(5)
                        while attempts.value == seen, ContinuousClock.now < until { sched_yield() }
                        usleep(1_000)  // the other thread, past its count, tries the lock meanwhile
                    }
                }
            } else {
                while !token.isStriped {
                    attempts.increment()
                    token.onCancel {}.unregister()
                }
            }
            for _ in 0..<100 { token.onCancel { runs.increment() } }
        }
        #expect(token.isStriped)
        #expect(token.registrationCount == 200)
        request.cancel()
        #expect(runs.value == 200)
        #expect(token.registrationCount == 0)
    }

    @Test func `a request that is cancelled or released gets no stripes`() {
        let cancelled = CancellationRequest()
        cancelled.cancel()
        #expect(!cancelled.token.stripeRegistrations())
        var released: CancellationRequest? = CancellationRequest()
        let token = released!.token
        released = nil
        #expect(!token.stripeRegistrations())
        #expect(!CancellationToken.none.stripeRegistrations())
    }

    // MARK: - Newest first

    @Test func `handlers in several stripes and the own list run newest first`() {
        let request = CancellationRequest()
        let token = request.token
        let order = RunOrder()
        for number in 0..<3 { token.onCancel { order.append(number) } }  // the request's own list
        #expect(token.stripeRegistrations())
        for number in 3..<20 {
            token.onCancel(inStripe: number * 7 % CancellationToken.stripeCount) { order.append(number) }
        }
        token.onCancel { order.append(20) }  // on this thread's processor's stripe
        #expect(token.registrationCount == 21)
        request.cancel()
        #expect(order.value == Array((0...20).reversed()))
        #expect(token.registrationCount == 0)
    }

    @Test func `handlers registered from several threads, one after another, run newest first`() async {
        let request = CancellationRequest()
        let token = request.token
        #expect(token.stripeRegistrations())
        let order = RunOrder()
        for number in 0..<12 {
            // Each on a new thread, after the previous one returned: ordered by happens-before.
            await onDedicatedThread { token.onCancel(inStripe: number) { order.append(number) } }
        }
        await onDedicatedThread { request.cancel() }
        #expect(order.value == Array((0..<12).reversed()))
    }

    @Test func `unregistered striped handlers are skipped, the others keep their order`() {
        let request = CancellationRequest()
        let token = request.token
        #expect(token.stripeRegistrations())
        let order = RunOrder()
        let registrations = (0..<10).map { number in token.onCancel(inStripe: number) { order.append(number) } }
        for number in [1, 4, 5, 9] { #expect(registrations[number].unregister()) }
        #expect(!registrations[4].unregister())
        request.cancel()
        #expect(order.value == [8, 7, 6, 3, 2, 0])
        #expect(registrations.allSatisfy { !$0.unregister() })
    }

    // MARK: - During and after cancellation

    @Test func `a striped handler may register, unregister and cancel during cancellation`() {
        let request = CancellationRequest()
        let other = CancellationRequest()
        let token = request.token
        #expect(token.stripeRegistrations())
        let order = RunOrder()
        let victim = token.onCancel(inStripe: 0) { order.append(0) }
        token.onCancel(inStripe: 1) {
            order.append(1)
            #expect(victim.unregister())
            token.onCancel(inStripe: 0) { order.append(2) }  // runs at once, on this thread
            other.cancel()
        }
        request.cancel()
        #expect(order.value == [1, 2])
        #expect(other.isCancellationRequested)
    }

    @Test func `registering on a striped token after cancel runs the handler at once`() async {
        let request = CancellationRequest()
        let token = request.token
        #expect(token.stripeRegistrations())
        request.cancel()
        let ranAtOnce = await onDedicatedThread {
            let runs = Counter()
            let registration = token.onCancel { runs.increment() }
            let inStripe = token.onCancel(inStripe: 1) { runs.increment() }
            return runs.value == 2 && !registration.unregister() && !inStripe.unregister()
        }
        #expect(ranAtOnce)
    }

    @Test func `unregisterAndWait from inside a striped handler returns at once`() {
        let request = CancellationRequest()
        let token = request.token
        #expect(token.stripeRegistrations())
        let returned = Counter()
        let registration = Mutex<CancellationRegistration?>(nil)
        let stored = token.onCancel(inStripe: 1) {
            registration.withLock { $0 }?.unregisterAndWait()
            returned.increment()
        }
        registration.withLock { $0 = stored }
        request.cancel()
        #expect(returned.value == 1)
    }

    // MARK: - Nothing kept

    @Test func `striped handlers are released as they run, and the request keeps none`() {
        let deinits = DeinitCounter()
        let request = CancellationRequest()
        let token = request.token
        #expect(token.stripeRegistrations())
        for index in 0..<8 {
            let tracked = deinits.make()
            token.onCancel(inStripe: index) { tracked.touch() }
        }
        #expect(deinits.deallocated == 0)
        request.cancel()
        #expect(deinits.deallocated == 8)
        #expect(token.registrationCount == 0)
    }

    @Test func `striped handlers are released when the request can no longer be cancelled`() {
        let deinits = DeinitCounter()
        var request: CancellationRequest? = CancellationRequest()
        let token = request!.token
        token.onCancel { deinits.make().touch() }  // released at once: the closure holds nothing
        let kept = deinits.make()
        token.onCancel { kept.touch() }  // the own list
        #expect(token.stripeRegistrations())
        for index in 0..<6 {
            let tracked = deinits.make()
            token.onCancel(inStripe: index) { tracked.touch() }
        }
        let before = deinits.deallocated
        request = nil
        #expect(deinits.deallocated == before + 6)
        #expect(!token.canBeCancelled)
        #expect(token.registrationCount == 0)
        let runs = Counter()
        token.onCancel { runs.increment() }
        token.onCancel(inStripe: 1) { runs.increment() }
        #expect(runs.value == 0)
        #expect(token.registrationCount == 0)
        _ = kept
    }

    @Test func `striped handlers are released when nothing can observe the request any more`() {
        let deinits = DeinitCounter()
        var request: CancellationRequest? = CancellationRequest(cancelAfter: .seconds(3600))
        var token: CancellationToken? = request!.token
        #expect(token!.stripeRegistrations())
        for index in 0..<4 {
            let tracked = deinits.make()
            token!.onCancel(inStripe: index) { tracked.touch() }
        }
        request = nil  // the pending timer keeps it cancellable while the token lives
        #expect(deinits.deallocated == 0)
        token = nil  // nothing can observe it: the core goes, its timer is stopped, its handlers released
        #expect(deinits.deallocated == 4)
    }

    /// Uses its token when deallocated: held only by a handler's closure, it deadlocks unless that
    /// closure is released outside every lock of the token (the request's and each stripe's, all of
    /// which `registrationCount` takes).
    final class UsesTokenOnDeinit: Sendable {
        let token: CancellationToken
        let deinits: Counter

        init(token: CancellationToken, deinits: Counter) {
            self.token = token
            self.deinits = deinits
        }

        func touch() {}

        deinit {
            _ = token.registrationCount
            token.onCancel {}.unregister()
            deinits.increment()
        }
    }

    /// A handler in stripe `index` whose closure holds the only reference to a ``UsesTokenOnDeinit``.
    @discardableResult
    func registerUsingTokenOnRelease(
        _ token: CancellationToken,
        inStripe index: Int,
        deinits: Counter
    )
        -> CancellationRegistration
    {
        let object = UsesTokenOnDeinit(token: token, deinits: deinits)
        return token.onCancel(inStripe: index) { object.touch() }
    }

    @Test func `a striped handler's closure is released outside every lock, whether unregistered, run or dropped`() {
        let deinits = Counter()
        let request = CancellationRequest()
        #expect(request.token.stripeRegistrations())
        let registration = registerUsingTokenOnRelease(request.token, inStripe: 0, deinits: deinits)
        #expect(registration.unregister())
        #expect(deinits.value == 1)
        for index in 0..<3 { registerUsingTokenOnRelease(request.token, inStripe: index, deinits: deinits) }
        request.cancel()
        #expect(deinits.value == 4)
        var abandoned: CancellationRequest? = CancellationRequest()
        let token = abandoned!.token
        #expect(token.stripeRegistrations())
        for index in 0..<3 { registerUsingTokenOnRelease(token, inStripe: index, deinits: deinits) }
        abandoned = nil  // can no longer be cancelled: the handlers are dropped
        #expect(deinits.value == 7)
        #expect(token.registrationCount == 0)
    }

    @Test func `unregistering a striped handler releases it at once`() {
        let deinits = DeinitCounter()
        let request = CancellationRequest()
        #expect(request.token.stripeRegistrations())
        let tracked = deinits.make()
        let registration = request.token.onCancel(inStripe: 1) { tracked.touch() }
        _ = consume tracked
        #expect(deinits.deallocated == 0)
        #expect(registration.unregister())
        #expect(deinits.deallocated == 1)
    }
}
