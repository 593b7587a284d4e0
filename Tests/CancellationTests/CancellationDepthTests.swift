import Cancellation
import Synchronization
import TestSupport
import Testing

/// Chains of any depth, in each direction, on a thread with a 512 KB stack: cancelling the root of
/// requests each linked to the previous one, handlers that register handlers that run at once, and
/// releasing such chains uncancelled. `make test` runs 10⁵ deep (recursion overflows that stack
/// near 1,400); `make stress` (`FUTURELIB_STRESS_ITERATIONS` set) runs 10⁶.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(10))))
struct CancellationDepthTests {
    static let depth = Scale.million  // 10⁵ in `make test`, 10⁶ under `make stress`

    @Test func `Scale: cancelling the root of a deep chain of linked requests, on a 512 KB stack`() async {
        let depth = Self.depth
        let outcome = Locked<(cancelled: Bool, runs: Int, reason: String)>((false, 0, ""))
        await onSmallStack {
            struct Root: Error {}
            let root = CancellationRequest()
            var chain = [root]
            chain.reserveCapacity(depth + 1)
            let runs = Counter()
            for _ in 0..<depth {
                let linked = CancellationRequest(linkedTo: [chain[chain.count - 1].token])
                linked.token.onCancel { runs.increment() }
                chain.append(linked)
            }
            root.cancel(reason: Root())
            // Every request of the chain is cancelled, its handler run, before cancel() returned.
            let leaf = chain[depth].token
            outcome.withLock {
                $0 = (leaf.isCancellationRequested, runs.value, "\(type(of: leaf.cancellationReason!))")
            }
        }
        let (cancelled, runs, reason) = outcome.value
        #expect(cancelled)
        #expect(runs == depth)
        #expect(reason == "Root")
    }

    @Test func `Scale: handlers registered from handlers on a cancelled token, deep, on a 512 KB stack`() async {
        let depth = Self.depth
        let outcome = Locked<[Int]>([])
        await onSmallStack {
            let order = Locked<[Int]>([])
            let nest = Nest(token: .cancelled, depth: depth, order: order)
            nest.register(level: 0)
            // Every nested handler ran before the outermost onCancel returned, in registration order.
            outcome.withLock { $0 = [order.value.count, order.value.first ?? -1, order.value.last ?? -1] }
        }
        #expect(outcome.value == [depth + 1, 0, depth])
    }

    @Test func `Scale: handlers registered from handlers while cancel() runs, deep, on a 512 KB stack`() async {
        let depth = Self.depth
        let outcome = Locked<Int>(0)
        await onSmallStack {
            let request = CancellationRequest()
            let order = Locked<[Int]>([])
            let nest = Nest(token: request.token, depth: depth, order: order)
            nest.register(level: 0)
            request.cancel()
            outcome.withLock { $0 = order.value.count }
        }
        #expect(outcome.value == depth + 1)
    }

    @Test func `Scale: dropping a deep chain of linked requests uncancelled, on a 512 KB stack`() async {
        let depth = Self.depth
        let remaining = Locked<Int>(-1)
        await onSmallStack {
            let root = CancellationRequest()
            do {
                // Only the newest request is held: each one's link to the previous keeps that one.
                var last = CancellationRequest(linkedTo: [root.token])
                for _ in 1..<depth { last = CancellationRequest(linkedTo: [last.token]) }
                _ = consume last
            }
            remaining.withLock { $0 = root.token.registrationCount }
        }
        #expect(remaining.value == 0)
    }

    @Test func `Scale: dropping the root of a deep chain whose leaf's token is held, on a 512 KB stack`() async {
        let depth = Self.depth
        let outcome = Locked<(canBeCancelled: Bool, released: Int)>((true, 0))
        await onSmallStack {
            var root: CancellationRequest? = CancellationRequest()
            var last = root!.token
            for _ in 0..<depth { last = CancellationRequest(linkedTo: [last]).token }
            let released = DeinitCounter()
            let tracked = released.make()
            last.onCancel { tracked.touch() }
            _ = consume tracked
            root = nil  // nothing can cancel the chain any more: every link goes, leaf to root
            outcome.withLock { $0 = (last.canBeCancelled, released.deallocated) }
        }
        #expect(!outcome.value.canBeCancelled)
        #expect(outcome.value.released == 1)
    }

    @Test func `a request kept only by a registration is cancelled through a link fired inside nested work`() {
        let source = CancellationRequest()
        let runs = Counter()
        // The request is dropped at once: only the registration observes it, the source's link keeps it cancellable.
        let registration = CancellationRequest(linkedTo: [source.token]).token.onCancel { runs.increment() }
        // Cancelled from a handler that runs at registration: the link's cancellation is queued, and
        // the link must not be released (which would abandon the request) before it ran.
        CancellationToken.cancelled.onCancel { source.cancel() }
        #expect(runs.value == 1)
        #expect(!registration.unregister())
    }

    @Test func `a handler registered from a handler that runs at once runs right after it returned`() {
        let order = Locked<[String]>([])
        CancellationToken.cancelled.onCancel {
            order.withLock { $0.append("outer starts") }
            CancellationToken.cancelled.onCancel { order.withLock { $0.append("first inner") } }
            CancellationToken.cancelled.onCancel { order.withLock { $0.append("second inner") } }
            order.withLock { $0.append("outer returns") }
        }
        #expect(order.value == ["outer starts", "outer returns", "first inner", "second inner"])
    }

    @Test
    func `a request linked to a request cancelled through a link is cancelled after that one's handlers returned`() {
        let root = CancellationRequest()
        let seen = Locked<[String]>([])
        root.token.onCancel { seen.withLock { $0.append("root, older than the link") } }
        let middle = CancellationRequest(linkedTo: [root.token])
        let leaf = CancellationRequest(linkedTo: [middle.token])
        middle.token.onCancel { seen.withLock { $0.append("middle, leaf cancelled: \(leaf.isCancellationRequested)") } }
        leaf.token.onCancel { seen.withLock { $0.append("leaf") } }
        root.cancel()
        #expect(seen.value == ["middle, leaf cancelled: false", "leaf", "root, older than the link"])
    }
}

/// A handler that registers the next level's handler on `token`, `depth` levels deep.
private final class Nest: Sendable {
    let token: CancellationToken
    let depth: Int
    let order: Locked<[Int]>

    init(token: CancellationToken, depth: Int, order: Locked<[Int]>) {
        self.token = token
        self.depth = depth
        self.order = order
    }

    func register(level: Int) {
        token.onCancel { [self] in
            order.withLock { $0.append(level) }
            if level < depth { register(level: level + 1) }
        }
    }
}
