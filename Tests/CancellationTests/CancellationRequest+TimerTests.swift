import Cancellation
import Foundation
import TestSupport
import Testing

/// Blocking waits (`wait(timeout:)`) run on dedicated threads, never on the cooperative pool.
/// Generous limits (10 s) bound only how long a failure takes to show; nothing asserts on elapsed time.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationRequestTimerTests {
    // MARK: - Firing

    @Test func `cancelAfter cancels the request and runs its handlers`() async {
        let request = CancellationRequest(cancelAfter: .milliseconds(20))
        let runs = Counter()
        request.token.onCancel { runs.increment() }
        let cancelled = await onDedicatedThread { request.token.wait(timeout: HangLimit.timeout(.seconds(10))) }
        #expect(cancelled)
        #expect(request.isCancellationRequested)
        #expect(await eventually { runs.value == 1 })
    }

    @Test func `cancel(after:) on an existing request fires`() async {
        let request = CancellationRequest()
        request.cancel(after: .milliseconds(20))
        let cancelled = await onDedicatedThread { request.token.wait(timeout: HangLimit.timeout(.seconds(10))) }
        #expect(cancelled)
    }

    @Test func `a deadline moved from the system clock to a manual clock and back fires once, on the system clock`()
        async
    {
        let manual = ManualClock()
        let request = CancellationRequest(cancelAfter: .seconds(3_600))  // the request's first system timer
        request.cancel(after: .seconds(1), clock: manual)  // replaces it: stopped for good
        request.cancel(after: .milliseconds(20), clock: .system)  // a system timer again, a new one
        let cancelled = await onDedicatedThread { request.token.wait(timeout: HangLimit.timeout(.seconds(10))) }
        #expect(cancelled)
        #expect(request.token.cancellationReason is DeadlineExceededError)
        #expect(manual.pendingTimerCount == 0)
    }

    @Test func `a deadline moved on the system clock fires at its new time, and a stopped one never fires`() async {
        let moved = CancellationRequest(cancelAfter: .seconds(3_600))
        moved.cancel(after: .milliseconds(20))
        let stopped = CancellationRequest(cancelAfter: .milliseconds(20))
        let stoppedToken = stopped.token
        stopped.cancel(after: .seconds(1), clock: ManualClock())  // its system timer is stopped
        let cancelled = await onDedicatedThread { moved.token.wait(timeout: HangLimit.timeout(.seconds(10))) }
        #expect(cancelled)
        let stoppedFired = await onDedicatedThread { stoppedToken.wait(timeout: .milliseconds(200)) }
        #expect(!stoppedFired)
    }

    // MARK: - A pending timer keeps its request cancellable while it is observable

    @Test func `a pending timer keeps its request cancellable: the token alone is enough`() async {
        let token = CancellationRequest(cancelAfter: .milliseconds(50)).token
        #expect(token.canBeCancelled)
        let cancelled = await onDedicatedThread { token.wait(timeout: HangLimit.timeout(.seconds(10))) }
        #expect(cancelled)
    }

    @Test func `a pending timer keeps its request cancellable, never alive`() async {
        var request: CancellationRequest? = CancellationRequest(cancelAfter: .milliseconds(50))
        let probe = WeakProbe(request!)
        let token = request!.token
        request = nil
        #expect(!probe.isAlive)  // the timer reaches the request's core weakly
        #expect(token.canBeCancelled)
        #expect(await onDedicatedThread { token.wait(timeout: HangLimit.timeout(.seconds(10))) })
    }

    @Test func `a registration alone keeps a request with a pending timer cancellable`() async {
        let runs = Counter()
        let registration = CancellationRequest(cancelAfter: .milliseconds(20)).token.onCancel { runs.increment() }
        #expect(await eventually { runs.value == 1 })
        #expect(!registration.unregister())
    }

    @Test func `dropping a request with a pending timer and every token of it releases its handlers at once`() {
        let released = DeinitCounter()
        do {
            let request = CancellationRequest(cancelAfter: .seconds(3600))
            let tracked = released.make()
            request.token.onCancel { tracked.touch() }
        }
        #expect(released.deallocated == 1)  // nothing observes it: its timer was stopped too
    }

    @Test func `cancel stops the pending timer and releases the request`() async {
        var request: CancellationRequest? = CancellationRequest(cancelAfter: .seconds(3600))
        let probe = WeakProbe(request!)
        let runs = Counter()
        request!.token.onCancel { runs.increment() }
        request!.cancel()
        #expect(runs.value == 1)
        request = nil
        #expect(await eventually { !probe.isAlive })
        #expect(runs.value == 1)
    }

    // MARK: - The last call wins

    @Test func `re-arming a long timer with a short delay fires`() async {
        let request = CancellationRequest(cancelAfter: .seconds(3600))
        request.cancel(after: .milliseconds(50))
        let cancelled = await onDedicatedThread { request.token.wait(timeout: HangLimit.timeout(.seconds(10))) }
        #expect(cancelled)
    }

    @Test func `re-arming a short timer with a long delay postpones it`() {
        let clock = ManualClock()
        let request = CancellationRequest(cancelAfter: .seconds(1), clock: clock)
        request.cancel(after: .seconds(3600))  // on the request's clock
        clock.advance(by: .seconds(3599))  // well past the first deadline
        #expect(!request.isCancellationRequested)
        clock.advance(by: .seconds(1))
        #expect(request.isCancellationRequested)
    }

    @Test func `re-arming many times keeps only the last deadline`() {
        let clock = ManualClock()
        let request = CancellationRequest()
        let runs = Counter()
        request.token.onCancel { runs.increment() }
        for _ in 0..<100 { request.cancel(after: .milliseconds(20), clock: clock) }
        request.cancel(after: .seconds(3600))
        #expect(clock.pendingTimerCount == 1)  // one timer, moved
        clock.advance(by: .seconds(3599))
        #expect(!request.isCancellationRequested)
        request.cancel(after: .milliseconds(20))  // earlier again
        clock.advance(by: .milliseconds(20))
        #expect(request.isCancellationRequested)
        #expect(runs.value == 1)
        #expect(clock.pendingTimerCount == 0)
    }

    // MARK: - On a manual clock

    @Test func `on a manual clock, cancelAfter cancels at the deadline, not an instant before, inside advance(by:)`() {
        let clock = ManualClock()
        let request = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
        let cancelledAt = Locked<Duration?>(nil)
        request.token.onCancel { cancelledAt.withLock { $0 = clock.now } }
        clock.advance(by: .seconds(30) - .nanoseconds(1))
        #expect(!request.isCancellationRequested)
        clock.advance(by: .nanoseconds(1))
        #expect(request.isCancellationRequested)
        #expect(cancelledAt.value == .seconds(30))  // the handler ran inside advance(by:)
        #expect(clock.pendingTimerCount == 0)  // the fired timer is stopped with the request
    }

    @Test func `the timer starts when cancelAfter or cancel(after:) is called, not when the clock started`() {
        let clock = ManualClock()
        clock.advance(by: .seconds(100))
        let fromInit = CancellationRequest(cancelAfter: .seconds(30), clock: clock)  // due at 130 s
        let rearmed = CancellationRequest(cancelAfter: .seconds(5), clock: clock)  // due at 105 s
        clock.advance(by: .seconds(4))
        rearmed.cancel(after: .seconds(20))  // the last call wins, from now: due at 124 s
        clock.advance(by: .seconds(20) - .nanoseconds(1))
        #expect(!rearmed.isCancellationRequested)
        clock.advance(by: .nanoseconds(1))
        #expect(rearmed.isCancellationRequested)
        clock.advance(by: .seconds(6) - .nanoseconds(1))
        #expect(!fromInit.isCancellationRequested)
        clock.advance(by: .nanoseconds(1))
        #expect(fromInit.isCancellationRequested)
    }

    @Test func `a request keeps its clock for cancel(after:)`() {
        let clock = ManualClock()
        let request = CancellationRequest(cancelAfter: .seconds(10), clock: clock)
        request.cancel(after: .seconds(2))
        clock.advance(by: .seconds(2))
        #expect(request.isCancellationRequested)
    }

    @Test func `cancel(after:clock:) with another clock replaces the pending timer`() {
        let first = ManualClock()
        let second = ManualClock()
        let request = CancellationRequest(cancelAfter: .seconds(1), clock: first)
        request.cancel(after: .seconds(5), clock: second)
        #expect(first.pendingTimerCount == 0)
        first.advance(by: .seconds(10))
        #expect(!request.isCancellationRequested)
        request.cancel(after: .seconds(3))  // the request's clock is now `second`
        second.advance(by: .seconds(3))
        #expect(request.isCancellationRequested)
    }

    @Test func `the token alone keeps a request on a manual clock cancellable`() {
        let clock = ManualClock()
        let token = CancellationRequest(cancelAfter: .seconds(1), clock: clock).token
        let runs = Counter()
        let registration = token.onCancel { runs.increment() }
        clock.advance(by: .seconds(1))
        #expect(token.isCancellationRequested)
        #expect(runs.value == 1)
        #expect(!registration.unregister())
    }

    @Test func `a timer on a manual clock that is never advanced holds nothing once nothing observes its request`() {
        let clock = ManualClock()
        let released = DeinitCounter()
        do {
            let request = CancellationRequest(cancelAfter: .seconds(3600), clock: clock)
            let tracked = released.make()
            request.token.onCancel { tracked.touch() }
            #expect(clock.pendingTimerCount == 1)
        }
        #expect(clock.pendingTimerCount == 0)  // removed from the clock at once
        #expect(released.deallocated == 1)
        clock.advance(by: .seconds(3600))  // nothing left to fire
    }

    @Test func `cancel() removes a pending timer from a manual clock`() {
        let clock = ManualClock()
        let request = CancellationRequest(cancelAfter: .seconds(3600), clock: clock)
        request.cancel()
        #expect(clock.pendingTimerCount == 0)
        #expect(request.isCancellationRequested)
    }

    // MARK: - After cancel() it does nothing

    @Test func `cancel(after:) after cancel does nothing and does not keep the request alive`() {
        var request: CancellationRequest? = CancellationRequest()
        let probe = WeakProbe(request!)
        let runs = Counter()
        request!.token.onCancel { runs.increment() }
        request!.cancel()
        request!.cancel(after: .seconds(3600))
        request!.cancel(after: .zero)
        request = nil
        #expect(!probe.isAlive)  // no timer was armed to hold it
        #expect(runs.value == 1)
    }

    // MARK: - Zero and negative delays

    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-5)])
    func `a delay of zero or less cancels before init returns`(delay: Duration) {
        let request = CancellationRequest(cancelAfter: delay)
        #expect(request.isCancellationRequested)
        let clock = ManualClock()
        #expect(CancellationRequest(cancelAfter: delay, clock: clock).isCancellationRequested)
        #expect(clock.pendingTimerCount == 0)  // no timer was made
    }

    @Test(arguments: [Duration.zero, .seconds(-1)])
    func `cancel(after:) with a delay of zero or less runs the handlers on this thread before it returns`(
        delay: Duration
    ) async {
        let request = CancellationRequest(cancelAfter: .seconds(3600))
        let outcome = await onDedicatedThread { () -> (runs: Int, sameThread: Bool) in
            let probe = RunProbe()  // created on the registering thread
            request.token.onCancel(probe.handler)
            request.cancel(after: delay)
            return (probe.runCount, probe.ranOnRegisteringThread)
        }
        #expect(outcome.runs == 1)
        #expect(outcome.sameThread)
    }

    @Test func `a delay too large for Dispatch is clamped, not trapped on`() {
        let request = CancellationRequest(cancelAfter: .seconds(Int64.max))
        #expect(!request.isCancellationRequested)
        request.cancel(after: Duration(secondsComponent: Int64.max, attosecondsComponent: 999_999_999_999_999_999))
        #expect(!request.isCancellationRequested)
        request.cancel()
        #expect(request.isCancellationRequested)
    }
}
