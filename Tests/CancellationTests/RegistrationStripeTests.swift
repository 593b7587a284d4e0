import Cancellation
import TestSupport
import Testing

/// What a registration stored in a stripe holds (`StripeOwner`): the stripe's owner, so that threads
/// sharing a token do not write the request's reference count, or the request's core once it has a
/// timer or links. Either way a registration behaves as one on the request's own list: it can be
/// unregistered after the request and its tokens are gone, and it keeps a request with a timer
/// cancellable while it lives.
@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct RegistrationStripeTests {
    @Test func `a striped registration still answers once the request and every token are gone`() {
        let deinits = DeinitCounter()
        var request: CancellationRequest? = CancellationRequest()
        var token: CancellationToken? = request!.token
        #expect(token!.stripeRegistrations())
        let tracked = deinits.make()
        let registration = token!.onCancel(inStripe: 1) { tracked.touch() }
        _ = consume tracked
        request = nil  // can no longer be cancelled: the handler is dropped
        token = nil
        #expect(deinits.deallocated == 1)
        #expect(!registration.unregister())
        registration.unregisterAndWait()  // returns at once: nothing runs it
        #expect(registration == registration)
    }

    @Test func `registrations in one stripe are equal only to themselves`() {
        let request = CancellationRequest()
        #expect(request.token.stripeRegistrations())
        let first = request.token.onCancel(inStripe: 0) {}
        let second = request.token.onCancel(inStripe: 0) {}
        let elsewhere = request.token.onCancel(inStripe: 1) {}
        #expect(first == first)
        #expect(first != second)
        #expect(first != elsewhere)
        #expect(Set([first, second, elsewhere, first]).count == 3)
        #expect(second.unregister())
        #expect(!second.unregister())
        request.cancel()
        #expect(!first.unregister())
    }

    @Test func `with a timer, a striped registration keeps the request cancellable once it and its tokens are gone`() {
        let clock = ManualClock()
        let runs = Counter()
        var request: CancellationRequest? = CancellationRequest(cancelAfter: .seconds(10), clock: clock)
        var token: CancellationToken? = request!.token
        #expect(token!.stripeRegistrations())
        let registration = token!.onCancel(inStripe: 1) { runs.increment() }
        request = nil
        token = nil
        clock.advance(by: .seconds(10))
        #expect(runs.value == 1)
        #expect(!registration.unregister())
    }

    @Test func `a timer armed on a striped request keeps it cancellable for the registrations made before`() {
        let striped = DroppableStripedRequest()
        let registrations = (0..<4).map { striped.register(inStripe: $0) }
        striped.armTimer()
        striped.dropRequestAndToken()
        striped.clock.advance(by: .seconds(10))
        #expect(striped.runs.value == 4)
        #expect(registrations.allSatisfy { !$0.unregister() })
    }

    @Test func `once the registrations made before the timer are unregistered and gone, nothing keeps the request`() {
        let striped = DroppableStripedRequest()
        var before: CancellationRegistration? = striped.register(inStripe: 0)
        striped.armTimer()
        _ = striped.register(inStripe: 1)  // its registration is dropped at once
        #expect(before!.unregister())
        before = nil  // a registration observes the request, unregistered or not: it goes too
        striped.dropRequestAndToken()  // nothing observes the request: its timer is stopped, its handler released
        #expect(striped.deinits.deallocated == 2)
        striped.clock.advance(by: .seconds(10))
        #expect(striped.runs.value == 0)
    }

    @Test func `registrations made before the timer and dropped let the request go with everything else`() {
        let striped = DroppableStripedRequest()
        for index in 0..<2 { _ = striped.register(inStripe: index) }  // each registration dropped at once
        striped.armTimer()
        #expect(striped.clock.pendingTimerCount == 1)
        striped.dropRequestAndToken()  // nothing observes the request: its timer is stopped, its handlers released
        #expect(striped.deinits.deallocated == 2)
        #expect(striped.clock.pendingTimerCount == 0)
        striped.clock.advance(by: .seconds(10))
        #expect(striped.runs.value == 0)
    }

    @Test func `the last registration made before the timer lets the request go when it is dropped`() {
        let striped = DroppableStripedRequest()
        var registration: CancellationRegistration? = striped.register(inStripe: 1)
        striped.armTimer()
        striped.dropRequestAndToken()
        #expect(striped.deinits.deallocated == 0)  // the registration observes the request: still cancellable
        #expect(striped.clock.pendingTimerCount == 1)
        #expect(registration != nil)
        registration = nil
        #expect(striped.deinits.deallocated == 1)
        #expect(striped.clock.pendingTimerCount == 0)
        striped.clock.advance(by: .seconds(10))
        #expect(striped.runs.value == 0)
    }

    @Test func `a dropped registration on a striped linked request leaves nothing on the source`() {
        let source = CancellationRequest()
        let deinits = DeinitCounter()
        var linked: CancellationRequest? = CancellationRequest(linkedTo: [source.token])
        var token: CancellationToken? = linked!.token
        #expect(token!.stripeRegistrations())
        for index in 0..<2 {
            let tracked = deinits.make()
            _ = token!.onCancel(inStripe: index) { tracked.touch() }
        }
        #expect(source.token.registrationCount == 1)
        linked = nil
        token = nil
        #expect(deinits.deallocated == 2)
        #expect(source.token.registrationCount == 0)
    }

    @Test func `with a timer, registrations from before and after it run newest first`() {
        let clock = ManualClock()
        let order = Locked<[Int]>([])
        let request = CancellationRequest()
        #expect(request.token.stripeRegistrations())
        let before = [
            request.token.onCancel(inStripe: 0) { order.withLock { $0.append(0) } },
            request.token.onCancel(inStripe: 1) { order.withLock { $0.append(1) } },
        ]
        request.cancel(after: .seconds(10), clock: clock)
        let after = [
            request.token.onCancel(inStripe: 0) { order.withLock { $0.append(2) } },
            request.token.onCancel(inStripe: 1) { order.withLock { $0.append(3) } },
        ]
        clock.advance(by: .seconds(10))
        #expect(order.value == [3, 2, 1, 0])
        #expect((before + after).allSatisfy { !$0.unregister() })
    }

    // A handler is released after its stripe's lock: its captures' `deinit`s are user code, which
    // may unregister a registration of the same stripe (a spin lock: inside the lock, a deadlock).
    // Release builds (`make test-release`) are the ones that could release it inside the lock.

    @Test func `unregistering releases the handler outside the stripe's lock`() {
        let request = CancellationRequest()
        let (registration, other) = handlerUnregisteringInItsStripe(on: request)
        #expect(registration.unregister())  // releases the handler: its capture unregisters `other`
        #expect(!other.unregister())
    }

    @Test func `unregistering and waiting releases the handler outside the stripe's lock`() {
        let request = CancellationRequest()
        let (registration, other) = handlerUnregisteringInItsStripe(on: request)
        registration.unregisterAndWait()
        #expect(!other.unregister())
    }

    @Test func `after a timer, unregistering a registration from before releases its handler outside the lock`() {
        let clock = ManualClock()
        let request = CancellationRequest()
        let (registration, other) = handlerUnregisteringInItsStripe(on: request)
        request.cancel(after: .seconds(10), clock: clock)
        #expect(registration.unregister())
        #expect(!other.unregister())
        clock.advance(by: .seconds(10))
        #expect(request.isCancellationRequested)
    }
}

/// Stripes `request` and stores a handler in stripe 1 whose capture, when released, unregisters
/// `other`, another registration of the same stripe; the handler holds the only reference to it.
private func handlerUnregisteringInItsStripe(
    on request: CancellationRequest
) -> (registration: CancellationRegistration, other: CancellationRegistration) {
    #expect(request.token.stripeRegistrations())
    return UnregistersOnDeinit.handler { request.token.onCancel(inStripe: 1, $0) }
}

/// A striped request on a manual clock, which a test arms a timer on and drops with its token, and
/// handlers that count their runs and their release.
private final class DroppableStripedRequest {
    let clock = ManualClock()
    let deinits = DeinitCounter()
    let runs = Counter()
    private var request: CancellationRequest? = CancellationRequest()
    private var token: CancellationToken?

    init() {
        token = request!.token
        #expect(token!.stripeRegistrations())
    }

    /// Stores a handler in stripe `index` that counts its runs (``runs``) and its release (``deinits``).
    func register(inStripe index: Int) -> CancellationRegistration {
        let tracked = deinits.make()
        let runs = runs
        return token!.onCancel(inStripe: index) {
            tracked.touch()
            runs.increment()
        }
    }

    /// `cancel(after: 10 s)` on ``clock``.
    func armTimer() {
        request!.cancel(after: .seconds(10), clock: clock)
    }

    /// Drops the request and its only token.
    func dropRequestAndToken() {
        request = nil
        token = nil
    }
}
