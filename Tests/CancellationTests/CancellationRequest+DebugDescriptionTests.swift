import Cancellation
import Testing

/// `debugDescription` of requests and tokens: the phase, the handlers, what keeps it cancellable.
@Suite(.timeLimit(.minutes(3)))
struct CancellationRequestDebugDescriptionTests {
    @Test func `an active request shows its handlers and that the request keeps it cancellable`() {
        let request = CancellationRequest()
        let first = request.token.onCancel {}
        request.token.onCancel {}
        #expect(
            String(reflecting: request)
                == "CancellationRequest(active; 2 handlers registered; cancellable by: its request)"
        )
        first.unregister()
        #expect(String(reflecting: request.token).contains("active; 1 handler registered"))
    }

    @Test func `a cancelled request says so`() {
        let request = CancellationRequest()
        request.token.onCancel {}
        request.cancel()
        #expect(String(reflecting: request) == "CancellationRequest(cancelled)")
        #expect(String(reflecting: request.token) == "CancellationToken(cancelled)")
    }

    @Test func `a token kept by a pending timer alone says the timer keeps it cancellable`() {
        let request = CancellationRequest(cancelAfter: .seconds(3600))
        #expect(String(reflecting: request).contains("cancellable by: its request, a pending timer"))
        let token = CancellationRequest(cancelAfter: .seconds(3600)).token
        #expect(String(reflecting: token).hasSuffix("cancellable by: a pending timer)"))
        let registration = token.onCancel {}
        #expect(String(reflecting: token).contains("1 handler registered"))
        registration.unregister()
    }

    @Test func `a token kept by a live source link alone says the link keeps it cancellable`() {
        let source = CancellationRequest()
        let token = CancellationRequest(linkedTo: [source.token]).token
        #expect(String(reflecting: token).hasSuffix("cancellable by: a live source link)"))
        source.cancel()
        #expect(String(reflecting: token) == "CancellationToken(cancelled)")
    }

    @Test func `none, cancelled and a token that can no longer be cancelled`() {
        #expect(String(reflecting: CancellationToken.none) == "CancellationToken.none")
        #expect(String(reflecting: CancellationToken.cancelled) == "CancellationToken.cancelled")
        let orphan = CancellationRequest().token
        #expect(String(reflecting: orphan) == "CancellationToken(can no longer be cancelled)")
    }
}
