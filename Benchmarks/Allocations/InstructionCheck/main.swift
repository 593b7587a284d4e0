// The scenarios of CI's instruction gate (`make bench-instructions`, Scripts/bench-instructions.py): each hot path of
// the allocation gate that runs on one thread without async code, plus a stream's subscribe/unsubscribe and its whole
// life, run `count` times and nothing else, for `valgrind --tool=callgrind`. The script runs every scenario at n and
// 2n operations and takes (I(2n) − I(n)) / n, so start-up, first-use costs and teardown cancel out, and compares it
// with Benchmarks/Thresholds/instructions.json.
//
//     InstructionCheck <scenario> <count>    run one scenario `count` times (what valgrind runs)
//     InstructionCheck --list                print each scenario's key, n and what one operation is, tab-separated
//
// No async code: valgrind 3.19 dies with an internal SIGSEGV as soon as Swift async code runs, so this file has no
// `await` (top-level code with one would make the whole of it async), and `Future { async }` stays the allocation
// gate's alone. No thread either: with threads the count changes from run to run (the order valgrind runs them in,
// a pool thread's spin), and the cost of a hand-off is its wake-up, which instructions do not show.
// The scenarios' bodies are the allocation gate's (Benchmarks/Allocations/AllocationCheck), key for key.

import Cancellation
import FutureLib

#if canImport(Glibc)
import Glibc
#endif

/// Keeps the optimizer from dropping a value, at the cost of one call.
@inline(never)
func sink(_ value: Int) {
    if value == -1 { print(value) }
}

/// One hot path: `run(count)` does `count` operations of it.
struct Scenario {
    var key: String
    /// n: the smaller of the two runs; the script runs n and 2n.
    var operations: Int
    var description: String
    var run: (Int) -> Void
}

/// The long-lived source of `linked-request` and `cancel-chain-with-token` (a server's shutdown token).
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

let scenarios: [Scenario] = [
    Scenario(
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
    Scenario(
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
    Scenario(
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
    Scenario(
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
    Scenario(
        key: "token-register-none-or-cancelled",
        operations: 50_000,
        description: "onCancel on .none and on .cancelled: nothing stored (per pair)"
    ) { count in
        for _ in 0..<count {
            CancellationToken.none.onCancel { sink(-1) }
            CancellationToken.cancelled.onCancel { sink(0) }
        }
    },
    Scenario(
        key: "request-with-handlers",
        operations: 5_000,
        description: "a request, 10 handlers registered, cancel() (per request)"
    ) { count in
        for _ in 0..<count {
            let request = CancellationRequest()
            let token = request.token
            for _ in 0..<10 { token.onCancel { sink(0) } }
            request.cancel()
        }
    },
    Scenario(
        key: "request-1000-handlers",
        operations: 20,
        description: "a request, 1,000 handlers registered, cancel() (per request)"
    ) { count in
        for _ in 0..<count {
            let request = CancellationRequest()
            let token = request.token
            for _ in 0..<1_000 { token.onCancel { sink(0) } }
            request.cancel()
        }
    },
    Scenario(
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
    Scenario(
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
    Scenario(
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
    Scenario(
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
    Scenario(
        key: "stream-publish",
        operations: 50_000,
        description: "a value sent on a StreamPromise to one .synchronous subscriber (per value)"
    ) { count in
        let promise = StreamPromise<Int>(capacity: 0)
        promise.stream.onSuccess(on: .synchronous) { sink($0) }
        for value in 0..<count { promise.fulfill(value) }
        promise.finish()
    },
    Scenario(
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
    Scenario(
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

// MARK: - Main

let arguments = CommandLine.arguments
if arguments.count == 2, arguments[1] == "--list" {
    for scenario in scenarios { print("\(scenario.key)\t\(scenario.operations)\t\(scenario.description)") }
    exit(0)
}
guard arguments.count == 3, let count = Int(arguments[2]), count >= 0,
    let scenario = scenarios.first(where: { $0.key == arguments[1] })
else {
    print(
        "usage: InstructionCheck <scenario> <count> | --list; scenarios: \(scenarios.map(\.key).joined(separator: ", "))"
    )
    exit(2)
}
scenario.run(count)
