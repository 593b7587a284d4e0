import Cancellation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationRequestLinkedTests {
    // MARK: - Cancelled when any source is

    @Test(arguments: 0..<3)
    func `a linked request is cancelled when any one source is`(index: Int) {
        let sources = (0..<3).map { _ in CancellationRequest() }
        let linked = CancellationRequest(linkedTo: sources.map(\.token))
        let runs = Counter()
        linked.token.onCancel { runs.increment() }
        #expect(!linked.isCancellationRequested)
        sources[index].cancel()
        #expect(linked.isCancellationRequested)  // synchronously, before the source's cancel() returned
        #expect(runs.value == 1)
        for source in sources { source.cancel() }
        #expect(runs.value == 1)
    }

    @Test func `an already cancelled source cancels the linked request in init`() {
        let live = CancellationRequest()
        let done = CancellationRequest()
        done.cancel()
        #expect(CancellationRequest(linkedTo: [live.token, done.token]).isCancellationRequested)
        #expect(CancellationRequest(linkedTo: [done.token, live.token]).isCancellationRequested)
        #expect(CancellationRequest(linkedTo: [.cancelled]).isCancellationRequested)
    }

    @Test func `tokens listed one by one link as the array does`() {
        let shutdown = CancellationRequest()
        let deadline = CancellationRequest()
        let one = CancellationRequest(linkedTo: shutdown.token)
        let two = CancellationRequest(linkedTo: shutdown.token, deadline.token)
        deadline.cancel()
        #expect(!one.isCancellationRequested)
        #expect(two.isCancellationRequested)
        shutdown.cancel()
        #expect(one.isCancellationRequested)
        #expect(CancellationRequest(linkedTo: .cancelled).isCancellationRequested)
    }

    @Test func `with no sources, only cancel() cancels it`() {
        let linked = CancellationRequest(linkedTo: [])
        #expect(!linked.isCancellationRequested)
        #expect(linked.token.canBeCancelled)
        linked.cancel()
        #expect(linked.isCancellationRequested)
    }

    @Test func `cancelling the linked request does not cancel its sources`() {
        let sources = (0..<3).map { _ in CancellationRequest() }
        let linked = CancellationRequest(linkedTo: sources.map(\.token))
        linked.cancel()
        #expect(linked.isCancellationRequested)
        #expect(sources.allSatisfy { !$0.isCancellationRequested })
    }

    // MARK: - Lifetime: cancellable while observable, nothing kept once it is not

    @Test func `the token alone keeps a linked request cancellable by a live source`() {
        let source = CancellationRequest()
        var linked: CancellationRequest? = CancellationRequest(linkedTo: [source.token])
        let probe = WeakProbe(linked!)
        let token = linked!.token
        linked = nil
        #expect(!probe.isAlive)  // the source holds the request's core weakly, never the request
        #expect(token.canBeCancelled)
        let runs = Counter()
        token.onCancel { runs.increment() }
        source.cancel()
        #expect(token.isCancellationRequested)
        #expect(runs.value == 1)
    }

    @Test func `a registration alone keeps a linked request cancellable by a live source`() {
        let source = CancellationRequest()
        let runs = Counter()
        let registration = CancellationRequest(linkedTo: [source.token]).token.onCancel { runs.increment() }
        source.cancel()
        #expect(runs.value == 1)
        #expect(!registration.unregister())  // it ran
    }

    @Test func `dropping a linked request and every token of it removes its link from the source at once`() {
        let source = CancellationRequest()
        let released = DeinitCounter()
        do {
            let linked = CancellationRequest(linkedTo: [source.token])
            let tracked = released.make()
            linked.token.onCancel { tracked.touch() }
            #expect(source.token.registrationCount == 1)
        }
        #expect(source.token.registrationCount == 0)
        #expect(released.deallocated == 1)  // its handlers were released without running
    }

    @Test func `a linked request with no request, token or registration left is not kept by its sources`() {
        let sources = (0..<3).map { _ in CancellationRequest() }
        let runs = Counter()
        for _ in 0..<100 {
            // The registration is dropped at once: nothing can observe the request, so nothing runs.
            CancellationRequest(linkedTo: sources.map(\.token)).token.onCancel { runs.increment() }
        }
        #expect(sources.allSatisfy { $0.token.registrationCount == 0 })
        for source in sources { source.cancel() }
        #expect(runs.value == 0)
    }

    @Test(arguments: 1...4)
    func `a linked request gone with its sources stays cancellable until the last source is deallocated`(count: Int) {
        var sources: [CancellationRequest] = (0..<count).map { _ in CancellationRequest() }
        var linked: CancellationRequest? = CancellationRequest(linkedTo: sources.map(\.token))
        let token = linked!.token
        let released = DeinitCounter()
        let tracked = released.make()
        token.onCancel { tracked.touch() }
        _ = consume tracked
        linked = nil
        #expect(token.canBeCancelled)  // its sources can still cancel it
        while sources.count > 1 {
            sources.removeFirst()  // deallocated uncancelled; another source can still cancel it
            #expect(token.canBeCancelled)
            #expect(released.deallocated == 0)
        }
        sources.removeAll()
        #expect(!token.canBeCancelled)
        #expect(!token.isCancellationRequested)
        #expect(released.deallocated == 1)  // the handler was released without running
    }

    @Test(arguments: 1...4)
    func `after other sources were deallocated, the last one left still cancels the linked request with its reason`(
        count: Int
    ) {
        var sources: [CancellationRequest] = (0..<count).map { _ in CancellationRequest() }
        var linked: CancellationRequest? = CancellationRequest(linkedTo: sources.map(\.token))
        let token = linked!.token
        linked = nil
        let last = sources.removeLast()
        sources.removeAll()
        #expect(token.canBeCancelled)
        last.cancel(reason: DeadlineExceededError())
        #expect(token.isCancellationRequested)
        #expect(token.cancellationReason is DeadlineExceededError)
    }

    @Test func `onCancel on a linked token that no source can cancel any more stores nothing and runs nothing`() {
        var source: CancellationRequest? = CancellationRequest()
        var linked: CancellationRequest? = CancellationRequest(linkedTo: [source!.token, .none])
        let token = linked!.token
        linked = nil
        #expect(token.canBeCancelled)  // the live source can still cancel it
        source = nil  // deallocated uncancelled: nothing can cancel the linked request any more
        #expect(!token.canBeCancelled)
        expectOnCancelStoresNothing(on: token)
        #expect(!token.isCancellationRequested)
    }

    @Test func `while the linked request itself is alive, dead sources do not end it`() {
        var source: CancellationRequest? = CancellationRequest()
        let linked = CancellationRequest(linkedTo: [source!.token])
        source = nil
        #expect(linked.token.canBeCancelled)
        linked.cancel()
        #expect(linked.isCancellationRequested)
    }

    @Test func `sources that can never be cancelled do not keep it cancellable`() {
        var dead: CancellationRequest? = CancellationRequest()
        let deadToken = dead!.token
        dead = nil
        var linked: CancellationRequest? = CancellationRequest(linkedTo: [.none, deadToken])
        let token = linked!.token
        #expect(!linked!.isCancellationRequested)
        linked = nil
        #expect(!token.canBeCancelled)
    }

    @Test func `a timer source keeps the linked request cancellable until it fires`() async {
        let token = CancellationRequest(linkedTo: [CancellationRequest(cancelAfter: .milliseconds(50)).token]).token
        #expect(token.canBeCancelled)
        #expect(await onDedicatedThread { token.wait(timeout: HangLimit.timeout(.seconds(10))) })
    }

    // MARK: - Links are removed when it is cancelled

    @Test func `cancelling the linked request removes its handlers from the sources`() {
        let sources = (0..<3).map { _ in CancellationRequest() }
        let linked = CancellationRequest(linkedTo: sources.map(\.token))
        #expect(sources.allSatisfy { $0.token.registrationCount == 1 })
        linked.cancel()
        #expect(sources.allSatisfy { $0.token.registrationCount == 0 })
    }

    @Test func `a source cancelling the linked request removes the links on the other sources`() {
        let sources = (0..<3).map { _ in CancellationRequest() }
        let linked = CancellationRequest(linkedTo: sources.map(\.token))
        let runs = Counter()
        linked.token.onCancel { runs.increment() }
        sources[1].cancel()
        #expect(linked.isCancellationRequested)
        #expect(sources[0].token.registrationCount == 0)
        #expect(sources[2].token.registrationCount == 0)
        sources[0].cancel()  // runs nothing of the linked request's
        sources[2].cancel()
        #expect(runs.value == 1)
    }

    @Test func `links removed in init when a later source is already cancelled`() {
        let live = CancellationRequest()
        let done = CancellationRequest()
        done.cancel()
        let linked = CancellationRequest(linkedTo: [live.token, done.token])
        #expect(linked.isCancellationRequested)
        #expect(live.token.registrationCount == 0)  // the link on `live` was removed
    }

    @Test func `a linked request can itself be a source`() {
        let root = CancellationRequest()
        let middle = CancellationRequest(linkedTo: [root.token])
        let leaf = CancellationRequest(linkedTo: [middle.token, .none])
        root.cancel()
        #expect(middle.isCancellationRequested)
        #expect(leaf.isCancellationRequested)
    }
}
