import Cancellation
import Foundation
import TestSupport
import Testing

/// `isReusable`: true only for a request that nothing but its one reference can observe. Each test
/// asks it of a request held in a local constant, as a pool does after taking the request out; the
/// other references a test makes are kept where a task or another object keeps them, in the heap
/// (``Kept``): an optimized build may count a second local reference in the same function as none.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationRequestReuseTests {
    @Test func `a new request is reusable, and stays so once its tokens are gone`() {
        let request = CancellationRequest()
        #expect(request.isReusable)
        let kept = Kept()
        kept.keep(request.token)
        #expect(!request.isReusable, "a token is held")
        kept.release()
        #expect(request.isReusable)
    }

    @Test func `a registration keeps a request from reuse until it is unregistered and released`() {
        let request = CancellationRequest()
        let kept = Kept()
        kept.keep(request.token.onCancel {})
        #expect(!request.isReusable)
        #expect(kept.registration?.unregister() == true)
        #expect(!request.isReusable, "the registration still holds the request's core")
        kept.release()
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
        let kept = Kept()
        kept.keep(request)
        #expect(!request.isReusable)
        kept.release()
        #expect(request.isReusable)
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

/// What a test keeps of a request where something else would (a task, another object): in the heap,
/// written and dropped by calls the optimizer does not see into.
private final class Kept: @unchecked Sendable {
    // Used by one test's thread at a time.
    private var values: [Any] = []

    @inline(never)
    func keep(_ value: Any) {
        values.append(value)
    }

    /// The registration kept, if one was.
    var registration: CancellationRegistration? {
        values.lazy.compactMap { $0 as? CancellationRegistration }.first
    }

    @inline(never)
    func release() {
        values.removeAll()
    }
}
