import Cancellation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3)))
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

    // MARK: - Lifetime: alive while a source can cancel it

    @Test func `a linked request stays alive while a source can still cancel it`() {
        let source = CancellationRequest()
        var linked: CancellationRequest? = CancellationRequest(linkedTo: [source.token])
        let probe = WeakProbe(linked!)
        let token = linked!.token
        linked = nil
        #expect(probe.isAlive)
        #expect(token.canBeCancelled)
        source.cancel()
        #expect(token.isCancellationRequested)
    }

    @Test func `a linked request is released once no source can cancel it any more`() {
        var source: CancellationRequest? = CancellationRequest()
        var linked: CancellationRequest? = CancellationRequest(linkedTo: [source!.token])
        let probe = WeakProbe(linked!)
        let token = linked!.token
        linked = nil
        #expect(probe.isAlive)
        source = nil  // the source is deallocated uncancelled: it can never cancel the linked request
        #expect(!probe.isAlive)
        #expect(!token.canBeCancelled)
    }

    @Test func `sources that can never be cancelled do not keep it alive`() {
        var dead: CancellationRequest? = CancellationRequest()
        let deadToken = dead!.token
        dead = nil
        var linked: CancellationRequest? = CancellationRequest(linkedTo: [.none, deadToken])
        let probe = WeakProbe(linked!)
        #expect(!linked!.isCancellationRequested)
        linked = nil
        #expect(!probe.isAlive)
    }

    @Test func `a timer source keeps the linked request alive until it fires`() async {
        let token = CancellationRequest(linkedTo: [CancellationRequest(cancelAfter: .milliseconds(50)).token]).token
        #expect(token.canBeCancelled)
        #expect(await onDedicatedThread { token.wait(timeout: .seconds(10)) })
    }

    // MARK: - Links are removed when it is cancelled

    @Test func `cancelling the linked request removes its handlers from the sources`() {
        let sources = (0..<3).map { _ in CancellationRequest() }
        var linked: CancellationRequest? = CancellationRequest(linkedTo: sources.map(\.token))
        let probe = WeakProbe(linked!)
        linked!.cancel()
        linked = nil
        // Only the links on the (still live) sources could hold it: they are gone.
        #expect(!probe.isAlive)
    }

    @Test func `a source cancelling the linked request removes the links on the other sources`() {
        let sources = (0..<3).map { _ in CancellationRequest() }
        var linked: CancellationRequest? = CancellationRequest(linkedTo: sources.map(\.token))
        let probe = WeakProbe(linked!)
        let token = linked!.token
        linked = nil
        sources[1].cancel()
        #expect(token.isCancellationRequested)
        #expect(!probe.isAlive)  // sources 0 and 2 are alive but no longer hold it
        sources[0].cancel()  // runs nothing of the linked request's
        sources[2].cancel()
    }

    @Test func `links removed in init when a later source is already cancelled`() {
        let live = CancellationRequest()
        let done = CancellationRequest()
        done.cancel()
        var linked: CancellationRequest? = CancellationRequest(linkedTo: [live.token, done.token])
        let probe = WeakProbe(linked!)
        #expect(linked!.isCancellationRequested)
        linked = nil
        #expect(!probe.isAlive)  // the link on `live` was removed
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
