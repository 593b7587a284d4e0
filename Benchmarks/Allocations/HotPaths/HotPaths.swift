// The hot paths both CI gates measure, defined once: the allocation gate (AllocationCheck) counts their mallocs, the
// instruction gate (InstructionCheck, under callgrind) their instructions, so a path added here is gated by both.
// Each runs on the calling thread without async code (valgrind cannot run Swift async code, and a thread's wake-ups
// make counts vary); the paths that need other threads or `await` are the allocation gate's alone.
//
// Both gates run a path at n and 2n operations and take the difference per operation, so that what a path sets up
// once (a long-lived token, 1,000 pending subscriptions) and the runtime's first-use costs cancel out.

import Cancellation
import FutureLib

/// Keeps the optimizer from dropping a value, at the cost of one call.
@inline(never)
public func sink(_ value: Int) {
    if value == -1 { print(value) }
}

/// One hot path: `run(count)` does `count` operations of it.
public struct HotPath: Sendable {
    /// The path's key in both gates' output and baseline files.
    public let key: String
    /// n: the smaller of the two runs; the gates run n and 2n.
    public let operations: Int
    /// What one operation is, for the gates' messages.
    public let description: String
    /// Does `count` operations of the path.
    public let run: @Sendable (Int) -> Void
}

/// The long-lived source of `map-with-token`, `linked-request` and `cancel-chain-with-token` (a server's shutdown
/// token): it outlives every request linked to it.
let longLived = CancellationRequest()

/// A fixed pseudo-random sequence (SplitMix64), so that every run picks the same subscriptions.
struct Random {
    var state: UInt64 = 42

    mutating func next(below bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

/// With `pending` subscriptions, each registered with its own request's token: `count` times, cancels a random one's
/// token (which removes its subscription) and registers a replacement, so that `pending` stay registered.
func cancelPending(_ count: Int, pending: Int, subscribe: (CancellationToken) -> Void) {
    var random = Random()
    var requests: [CancellationRequest] = []
    requests.reserveCapacity(pending)
    for _ in 0..<pending {
        let request = CancellationRequest()
        subscribe(request.token)
        requests.append(request)
    }
    for _ in 0..<count {
        let index = random.next(below: pending)
        requests[index].cancel()
        let request = CancellationRequest()
        subscribe(request.token)
        requests[index] = request
    }
}

/// A request with `handlers` handlers registered, cancelled, `count` times.
func cancelRequests(_ count: Int, handlers: Int) {
    for _ in 0..<count {
        let request = CancellationRequest()
        let token = request.token
        for _ in 0..<handlers { token.onCancel { sink(0) } }
        request.cancel()
    }
}

/// Every hot path, in the order the gates report them.
public let hotPaths: [HotPath] = [
    HotPath(
        key: "promise-continuation-fulfil",
        operations: 20_000,
        description: "a promise, one continuation on .synchronous, fulfilled (per promise)"
    ) { count in
        for _ in 0..<count {
            let promise = Promise<Int>()
            promise.future.onSuccess(on: .synchronous) { sink($0) }
            promise.fulfill(1)
        }
    },
    HotPath(
        key: "map-chain-10",
        operations: 2_000,
        description: "ten maps on a pending promise, one continuation, fulfilled (per chain)"
    ) { count in
        for _ in 0..<count {
            let promise = Promise<Int>()
            var future = promise.future
            for _ in 0..<10 { future = future.map(on: .synchronous) { $0 &+ 1 } }
            future.onSuccess(on: .synchronous) { sink($0) }
            promise.fulfill(1)
        }
    },
    HotPath(
        key: "map-with-token",
        operations: 10_000,
        description: "a map with a live token on a pending promise, fulfilled (per promise and map)"
    ) { count in
        let token = longLived.token
        for _ in 0..<count {
            let promise = Promise<Int>()
            let mapped = promise.future.map(on: .synchronous, cancellationToken: token) { $0 &+ 1 }
            promise.fulfill(1)
            if mapped.isCompleted == false { sink(-1) }
        }
    },
    HotPath(
        key: "token-register-unregister",
        operations: 50_000,
        description: "onCancel + unregister() on one live token (per pair)"
    ) { count in
        let request = CancellationRequest()
        let token = request.token
        for _ in 0..<count {
            if !token.onCancel({}).unregister() { sink(-1) }
        }
    },
    HotPath(
        key: "token-register-none-or-cancelled",
        operations: 50_000,
        description: "onCancel on .none and on .cancelled: nothing stored (per pair)"
    ) { count in
        for _ in 0..<count {
            CancellationToken.none.onCancel { sink(-1) }
            CancellationToken.cancelled.onCancel { sink(0) }
        }
    },
    HotPath(
        key: "request-released",
        operations: 20_000,
        description:
            "a request, its token read, released uncancelled with nothing registered (per request: a server's "
            + "request whose client stayed)"
    ) { count in
        for _ in 0..<count {
            let request = CancellationRequest()
            if !request.token.canBeCancelled { sink(-1) }
        }
    },
    HotPath(
        key: "request-reused",
        operations: 20_000,
        description:
            "a spare request checked with isReusable and reused, its token read and dropped (per request: a "
            + "server that keeps the last request of a connection for the next one)"
    ) { count in
        var spare: CancellationRequest? = CancellationRequest()
        for _ in 0..<count {
            let request: CancellationRequest
            if let reused = spare.take(), reused.isReusable {
                request = reused
            } else {
                sink(-1)
                request = CancellationRequest()
            }
            if !request.token.canBeCancelled { sink(-1) }
            spare = request
        }
    },
    HotPath(
        key: "request-with-handlers",
        operations: 5_000,
        description: "a request, 10 handlers registered, cancel() (per request)"
    ) { count in
        cancelRequests(count, handlers: 10)
    },
    HotPath(
        key: "request-1000-handlers",
        operations: 20,
        description: "a request, 1,000 handlers registered, cancel() (per request)"
    ) { count in
        cancelRequests(count, handlers: 1_000)
    },
    HotPath(
        key: "linked-request",
        operations: 5_000,
        description: "a client request and a request linked to it and a long-lived token, released (per request)"
    ) { count in
        for _ in 0..<count {
            let client = CancellationRequest()
            let request = CancellationRequest(linkedTo: [longLived.token, client.token])
            if request.isCancellationRequested { sink(-1) }
        }
    },
    HotPath(
        key: "cancel-chain-with-token",
        operations: 5_000,
        description:
            "a client cancels a request linked to it and a long-lived token, with a map and a flatMap on its token "
            + "(per request, its making included)"
    ) { count in
        for _ in 0..<count {
            let client = CancellationRequest()
            let request = CancellationRequest(linkedTo: [longLived.token, client.token])
            let promise = Promise<Int>()
            let rendered = promise.future
                .map(on: .synchronous, cancellationToken: request.token) { $0 &+ 1 }
                .flatMap(on: .synchronous, cancellationToken: request.token) { Future(value: $0) }
            client.cancel()
            if rendered.isCompleted == false { sink(-1) }
        }
    },
    HotPath(
        key: "request-deadline",
        operations: 5_000,
        description: "a request with a deadline (cancel(after:) on the system clock), released before it (per request)"
    ) { count in
        for _ in 0..<count {
            let request = CancellationRequest()
            request.cancel(after: .seconds(3_600))
            if request.isCancellationRequested { sink(-1) }
        }
    },
    HotPath(
        key: "future-cancel-pending-1000",
        operations: 5_000,
        description:
            "with 1,000 continuations pending on one promise, each with its own token: one token cancelled "
            + "(removing its continuation) and a new continuation registered (per cancel)"
    ) { count in
        let promise = Promise<Int>()
        cancelPending(count, pending: 1_000) { token in
            promise.future.onSuccess(on: .synchronous, cancellationToken: token) { sink($0) }
        }
        promise.fulfill(1)
    },
    HotPath(
        key: "stream-publish",
        operations: 50_000,
        description: "a value sent on a StreamPromise to one .synchronous subscriber (per value)"
    ) { count in
        let promise = StreamPromise<Int>(capacity: 0)
        promise.stream.onSuccess(on: .synchronous) { sink($0) }
        for value in 0..<count { promise.fulfill(value) }
        promise.finish()
    },
    HotPath(
        key: "stream-subscribe-unsubscribe",
        operations: 5_000,
        description:
            "with 1,000 subscribers on one open stream, each with its own token: one token cancelled "
            + "(unsubscribing it) and a new subscriber subscribed (per cancel)"
    ) { count in
        let promise = StreamPromise<Int>(capacity: 0)
        cancelPending(count, pending: 1_000) { token in
            promise.stream.onSuccess(on: .synchronous, cancellationToken: token) { sink($0) }
        }
        promise.finish()
    },
    HotPath(
        key: "stream-lifecycle",
        operations: 5_000,
        description: "a stream's whole life: a StreamPromise, one .synchronous subscriber, a value, finish(), "
            + "released (per stream)"
    ) { count in
        for value in 0..<count {
            let promise = StreamPromise<Int>(capacity: 0)
            promise.stream.onSuccess(on: .synchronous) { sink($0) }
            promise.fulfill(value)
            promise.finish()
        }
    },
]
