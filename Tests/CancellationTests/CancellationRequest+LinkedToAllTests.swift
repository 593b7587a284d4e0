import Cancellation
import Synchronization
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationRequestLinkedToAllTests {
    struct Reason: Error, Equatable {
        let index: Int
    }

    // MARK: - Semantics

    @Test(arguments: [[0, 1, 2], [2, 1, 0], [1, 0, 2]])
    func `cancelled once every source is, with the last one's reason`(order: [Int]) {
        let sources = (0..<3).map { _ in CancellationRequest() }
        let all = CancellationRequest(linkedToAll: sources.map(\.token))
        let runs = Counter()
        all.token.onCancel { runs.increment() }
        for index in order.dropLast() {
            sources[index].cancel(reason: Reason(index: index))
            #expect(!all.isCancellationRequested)
        }
        sources[order.last!].cancel(reason: Reason(index: order.last!))
        #expect(all.isCancellationRequested)  // synchronously, before the last source's cancel() returned
        #expect(runs.value == 1)
        #expect(all.token.cancellationReason as? Reason == Reason(index: order.last!))
        #expect(sources.allSatisfy { $0.token.registrationCount == 0 })
    }

    @Test func `an arrival queued inside a cancellation still reads its source's reason once the source is gone`() {
        let kept = Locked<[CancellationRequest]>([])
        let client = CancellationRequest()
        let linked = CancellationRequest(linkedTo: [client.token])
        linked.token.onCancel {
            // Inside the cancellation's handlers: a handler registered on a cancelled source is queued
            // to run once this one returned, by which time nothing else holds that source.
            var source: CancellationRequest? = CancellationRequest()
            source!.cancel(reason: DeadlineExceededError())
            let all = CancellationRequest(linkedToAll: [source!.token])
            kept.withLock { $0.append(all) }
            source = nil
        }
        client.cancel()
        #expect(kept.value.count == 1)
        #expect(kept.value.first?.token.cancellationReason is DeadlineExceededError)
    }

    @Test func `sources already cancelled count at once`() {
        let done = CancellationRequest()
        done.cancel(reason: Reason(index: 0))
        let live = CancellationRequest()
        let all = CancellationRequest(linkedToAll: [done.token, live.token])
        #expect(!all.isCancellationRequested)
        live.cancel()
        #expect(all.token.cancellationReason is CancellationError)

        let finished = CancellationRequest(linkedToAll: [.cancelled, done.token])
        #expect(finished.isCancellationRequested)  // before init returned, with the last one's reason
        #expect(finished.token.cancellationReason as? Reason == Reason(index: 0))
    }

    @Test func `none among the sources, or no source: never cancelled by them, nothing stored`() {
        let source = CancellationRequest()
        let withNone = CancellationRequest(linkedToAll: [source.token, .none])
        let empty = CancellationRequest(linkedToAll: [])
        #expect(source.token.registrationCount == 0)
        source.cancel()
        #expect(!withNone.isCancellationRequested)
        #expect(!empty.isCancellationRequested)
        empty.cancel()  // its own cancel() still works
        #expect(empty.isCancellationRequested)

        let dropped = CancellationRequest(linkedToAll: [])
        let token = dropped.token
        _ = consume dropped
        #expect(!token.canBeCancelled)
    }

    @Test func `a source that can no longer be cancelled stores nothing on the others`() {
        let live = CancellationRequest()
        let dead = CancellationRequest().token  // its request is gone
        let all = CancellationRequest(linkedToAll: [live.token, dead])
        #expect(live.token.registrationCount == 0)
        live.cancel()
        #expect(!all.isCancellationRequested)
    }

    @Test func `the same source twice counts twice, and is cancelled once`() {
        let source = CancellationRequest()
        let all = CancellationRequest(linkedToAll: [source.token, source.token])
        source.cancel()
        #expect(all.isCancellationRequested)
    }

    @Test func `cancelling the all-of request removes its links and leaves its sources alone`() {
        let sources = (0..<3).map { _ in CancellationRequest() }
        let all = CancellationRequest(linkedToAll: sources.map(\.token))
        all.cancel()
        #expect(sources.allSatisfy { $0.token.registrationCount == 0 && !$0.isCancellationRequested })
    }

    // MARK: - Lifetime

    @Test func `a dropped all-of request leaves nothing on its sources`() {
        let sources = (0..<3).map { _ in CancellationRequest() }
        let released = DeinitCounter()
        for _ in 0..<100 {
            let all = CancellationRequest(linkedToAll: sources.map(\.token))
            let tracked = released.make()
            all.token.onCancel { tracked.touch() }
        }
        #expect(sources.allSatisfy { $0.token.registrationCount == 0 })
        #expect(released.deallocated == 100)  // released without running
        for source in sources { source.cancel() }
    }

    @Test func `the token alone keeps an all-of request cancellable by its live sources`() {
        let sources = (0..<2).map { _ in CancellationRequest() }
        let token = CancellationRequest(linkedToAll: sources.map(\.token)).token
        #expect(token.canBeCancelled)
        let runs = Counter()
        token.onCancel { runs.increment() }
        for source in sources { source.cancel() }
        #expect(token.isCancellationRequested)
        #expect(runs.value == 1)
    }

    @Test func `a source gone uncancelled makes a dropped all-of request uncancellable and lets go of the rest`() {
        let live = CancellationRequest()
        var doomed: CancellationRequest? = CancellationRequest()
        let token = CancellationRequest(linkedToAll: [live.token, doomed!.token]).token
        #expect(live.token.registrationCount == 1)
        doomed = nil  // can never be cancelled now: neither can the all-of request
        #expect(!token.canBeCancelled)
        #expect(live.token.registrationCount == 0)
        expectOnCancelStoresNothing(on: token)
    }

    // MARK: - Races

    final class AllOfRound: Sendable {
        let sources = (0..<4).map { _ in CancellationRequest() }
        let all: CancellationRequest
        let runs = Counter()

        init() {
            all = CancellationRequest(linkedToAll: sources.map(\.token))
            let runs = runs
            all.token.onCancel { runs.increment() }
        }
    }

    @Test func `Race: all-of sources cancelled from several threads at once: one cancellation, a source's reason`()
        async
    {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { AllOfRound() },
            actions: (0..<4).map { index in { $0.sources[index].cancel(reason: Reason(index: index)) } },
            check: { round in
                guard round.all.isCancellationRequested, round.runs.value == 1 else {
                    return "cancelled: \(round.all.isCancellationRequested), handler runs: \(round.runs.value)"
                }
                guard let reason = round.all.token.cancellationReason as? Reason, (0..<4).contains(reason.index) else {
                    return "unexpected reason \(String(describing: round.all.token.cancellationReason))"
                }
                guard round.sources.allSatisfy({ $0.token.registrationCount == 0 }) else {
                    return "a link was left on a source"
                }
                return nil
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }
}
