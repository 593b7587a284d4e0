import Cancellation
import Foundation
import TestSupport
import Testing

/// `isReusable`: true only for a request that nothing but its one reference can observe. Each test
/// asks it of a request held in a local constant, as a pool does after taking the request out.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationRequestReuseTests {
    @Test func `a new request is reusable, and stays so once its tokens are gone`() {
        let request = CancellationRequest()
        #expect(request.isReusable)
        do {
            let token = request.token
            #expect(!request.isReusable, "a token is held")
            #expect(!token.isCancellationRequested)
        }
        #expect(request.isReusable)
    }

    @Test func `a registration keeps a request from reuse until it is unregistered and released`() {
        let request = CancellationRequest()
        do {
            let registration = request.token.onCancel {}
            #expect(!request.isReusable)
            #expect(registration.unregister())
            #expect(!request.isReusable, "the registration still holds the request's core")
        }
        #expect(request.isReusable)
    }

    @Test func `a cancelled request, one with a timer, and a linked one are not reusable`() {
        let cancelled = CancellationRequest()
        cancelled.cancel()
        #expect(!cancelled.isReusable)

        let timed = CancellationRequest()
        timed.cancel(after: .seconds(60))
        #expect(!timed.isReusable)

        let source = CancellationRequest()
        let linked = CancellationRequest(linkedTo: [source.token])
        #expect(!linked.isReusable)
        #expect(!source.isReusable, "the link's handler is on the source: it would cancel the linked request")
    }

    @Test func `a second reference to the request keeps it from reuse`() {
        let request = CancellationRequest()
        let other = request
        #expect(!request.isReusable)
        withExtendedLifetime(other) {}
    }

    @Test func `a reused request works as a new one`() {
        let request = CancellationRequest()
        do { _ = request.token.onCancel {}.unregister() }
        #expect(request.isReusable)
        let runs = Counter()
        let registration = request.token.onCancel { runs.increment() }
        request.cancel(reason: DeadlineExceededError())
        #expect(runs.value == 1)
        #expect(request.token.cancellationReason is DeadlineExceededError)
        #expect(!registration.unregister())
        #expect(!request.isReusable)
    }

    @Test func `a request whose handler list grew a slab is reusable once its handlers are gone`() {
        let request = CancellationRequest()
        do {
            let registrations = (0..<8).map { _ in request.token.onCancel {} }
            for registration in registrations { #expect(registration.unregister()) }
        }
        #expect(request.isReusable)
        let runs = Counter()
        _ = request.token.onCancel { runs.increment() }
        request.cancel()
        #expect(runs.value == 1)
    }
}
