// A release driver for `valgrind --tool=callgrind`: runs one scenario `count` times, and nothing else.
//
//     CallgrindDriver <scenario> <count>
//
// Callgrind counts the instructions the whole process executes. Run it twice, with `count` and `2 * count`:
// the difference divided by `count` is the cost of one operation, with start-up, first-call and teardown costs
// cancelled out. Scripts/bench-report.py does that for every scenario (`make bench-callgrind`).
//
// Scenarios (the numbers are those of Documentation/Performance.md):
//   futurelib-promise / nio-promise     1. promise + one continuation + completion (NIO on an EmbeddedEventLoop)
//   futurelib-map / nio-map             2. a chain of ten maps on a pending future, then completion
//   futurelib-sequence / nio-sequence   3. sequence() / whenAllSucceed of 1,000 completed futures (one operation)
//   futurelib-pending / nio-pending     1. `count` promises, each with one continuation, all pending at once, then
//                                          completed: run under `valgrind --tool=dhat` for the bytes per pending promise
//   cancellation-register               11. onCancel + unregister on one token, one thread (the uncontended path
//                                          that the shared-token striping must not slow down)
//   cancellation-register-striped       11. the same from a thread that is not the token's first (a request gets
//                                          stripes only from contention, which valgrind, running one thread at a
//                                          time, does not produce here: this measures the unstriped path too)
//   cancellation-cancel                 6. a request with 10 handlers, cancelled (LIFO run of the handlers)
//   futurelib-cancel-pending-<N>        8. N continuations pending on one promise, each with its own token; one
//                                          operation cancels a random one's token (removing it from the future)
//                                          and registers a replacement, so that N stay pending
//   scaling-cancel-pending              8. not for valgrind: the wall-clock time per cancel of the same, for
//                                          N = 10^3 ... 10^6, the median of `count` rounds of 1,000 cancels each
//   mallinfo-futurelib / mallinfo-nio   13. not for valgrind: prints the heap bytes per pending promise with one
//                                          continuation as glibc's malloc counts them (`mallinfo2().uordblks`,
//                                          so rounded up to malloc's chunk sizes), for `count` promises
//
// No async scenarios (5, 7): valgrind 3.19 dies with an internal SIGSEGV as soon as Swift async code runs.

import BenchmarkSupport
import Dispatch
import FutureLib
import MallocInfo
import NIOCore
import NIOEmbedded

/// Keeps the optimizer from dropping a value, at the cost of one call.
@inline(never)
func sink(_ value: Int) {
    if value == -1 { print(value) }
}

func futureLibPromise(_ count: Int) {
    for _ in 0..<count {
        let promise = Promise<Int>()
        promise.future.onSuccess(on: .synchronous) { sink($0) }
        promise.fulfill(1)
    }
}

func nioPromise(_ count: Int) throws {
    let loop = EmbeddedEventLoop()
    for _ in 0..<count {
        let promise = loop.makePromise(of: Int.self)
        promise.futureResult.whenSuccess { sink($0) }
        promise.succeed(1)
    }
    try loop.syncShutdownGracefully()
}

func futureLibMap(_ count: Int) {
    for _ in 0..<count {
        let promise = Promise<Int>()
        var future = promise.future
        for _ in 0..<10 {
            future = future.map(on: .synchronous) { $0 &+ 1 }
        }
        future.onSuccess(on: .synchronous) { sink($0) }
        promise.fulfill(1)
    }
}

func nioMap(_ count: Int) throws {
    let loop = EmbeddedEventLoop()
    for _ in 0..<count {
        let promise = loop.makePromise(of: Int.self)
        var future = promise.futureResult
        for _ in 0..<10 {
            future = future.map { $0 &+ 1 }
        }
        future.whenSuccess { sink($0) }
        promise.succeed(1)
    }
    try loop.syncShutdownGracefully()
}

func futureLibSequence(_ count: Int) {
    let futures = (0..<1_000).map { Future(value: $0) }
    for _ in 0..<count {
        futures.sequence().onSuccess(on: .synchronous) { sink($0.count) }
    }
}

func nioSequence(_ count: Int) throws {
    let loop = EmbeddedEventLoop()
    let futures = (0..<1_000).map { loop.makeSucceededFuture($0) }
    for _ in 0..<count {
        EventLoopFuture.whenAllSucceed(futures, on: loop).whenSuccess { sink($0.count) }
    }
    try loop.syncShutdownGracefully()
}

func futureLibPending(_ count: Int) {
    var pending: [Promise<Int>] = []
    pending.reserveCapacity(count)
    for _ in 0..<count {
        let promise = Promise<Int>()
        promise.future.onSuccess(on: .synchronous) { sink($0) }
        pending.append(promise)
    }
    for promise in pending {
        promise.fulfill(1)
    }
}

func nioPending(_ count: Int) throws {
    let loop = EmbeddedEventLoop()
    var pending: [EventLoopPromise<Int>] = []
    pending.reserveCapacity(count)
    for _ in 0..<count {
        let promise = loop.makePromise(of: Int.self)
        promise.futureResult.whenSuccess { sink($0) }
        pending.append(promise)
    }
    for promise in pending {
        promise.succeed(1)
    }
    try loop.syncShutdownGracefully()
}

func cancellationRegister(_ count: Int) {
    let request = CancellationRequest()
    let token = request.token
    for _ in 0..<count {
        let registration = token.onCancel {}
        if !registration.unregister() { sink(-1) }
    }
}

/// The same on a token whose first registration came from another thread. (Issue 19's experiment striped by thread;
/// the landed design stripes a request only once its lock was found contended, so this is the unstriped path.)
func cancellationRegisterStriped(_ count: Int) {
    let request = CancellationRequest()
    let token = request.token
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        token.onCancel {}.unregister()
        done.signal()
    }
    done.wait()
    for _ in 0..<count {
        let registration = token.onCancel {}
        if !registration.unregister() { sink(-1) }
    }
}

func cancellationCancel(_ count: Int) {
    for _ in 0..<count {
        let request = CancellationRequest()
        let token = request.token
        for _ in 0..<10 { token.onCancel { sink(0) } }
        request.cancel()
    }
}

/// `count` continuations pending on one promise, each registered with its own request's token: cancelling a
/// request removes its continuation from the future (the server pattern: every request waits on one long-lived
/// future, and a disconnect cancels its token).
final class PendingContinuations {
    let promise = Promise<Int>()
    var requests: [CancellationRequest] = []
    var random = SplitMix64(seed: 42)  // the same continuations in every run

    init(count: Int) {
        requests.reserveCapacity(count)
        for _ in 0..<count { requests.append(register()) }
    }

    func register() -> CancellationRequest {
        let request = CancellationRequest()
        promise.future.onSuccess(on: .synchronous, cancellationToken: request.token) { sink($0) }
        return request
    }

    /// `count` distinct indices, picked at random.
    func randomIndices(_ count: Int) -> [Int] {
        Array(requests.indices.shuffled(using: &random).prefix(count))
    }

    func finish() {
        promise.fulfill(1)
    }
}

func futureLibCancelPending(_ count: Int, pending: Int) {
    let fixture = PendingContinuations(count: pending)
    for _ in 0..<count {
        let index = Int.random(in: 0..<pending, using: &fixture.random)
        fixture.requests[index].cancel()
        fixture.requests[index] = fixture.register()
    }
    fixture.finish()
}

/// Wall-clock nanoseconds per cancel with N continuations pending, for N = 10^3 ... 10^6: the median of `rounds`
/// rounds, each cancelling 1,000 distinct continuations picked at random (then replaced, unmeasured).
func scalingCancelPending(_ rounds: Int) {
    let perRound = 1_000
    for pending in [1_000, 10_000, 100_000, 1_000_000] {
        let fixture = PendingContinuations(count: pending)
        var samples: [Double] = []
        for _ in 0..<max(rounds, 1) {
            let indices = fixture.randomIndices(perRound)
            let victims = indices.map { fixture.requests[$0] }
            let start = DispatchTime.now().uptimeNanoseconds
            for request in victims { request.cancel() }
            let end = DispatchTime.now().uptimeNanoseconds
            samples.append(Double(end - start) / Double(victims.count))
            for index in indices { fixture.requests[index] = fixture.register() }
        }
        fixture.finish()
        samples.sort()
        print("cancel a continuation's token, \(pending) pending: \(samples[samples.count / 2]) ns per cancel")
    }
}

/// Heap bytes in use as glibc's malloc counts them: requested sizes rounded up to its chunks.
func heapBytesInUse() -> Int {
    Int(malloc_info_bytes_in_use())
}

func printBytesPerPending(_ count: Int, _ build: () -> Any) {
    let before = heapBytesInUse()
    let pending = build()
    let after = heapBytesInUse()
    print("\(Double(after - before) / Double(count)) bytes per pending promise")
    withExtendedLifetime(pending) {}
}

func mallinfoFutureLib(_ count: Int) {
    var pending: [Promise<Int>] = []
    pending.reserveCapacity(count)
    printBytesPerPending(count) {
        for _ in 0..<count {
            let promise = Promise<Int>()
            promise.future.onSuccess(on: .synchronous) { sink($0) }
            pending.append(promise)
        }
        return 0
    }
    for promise in pending { promise.fulfill(1) }
}

func mallinfoNIO(_ count: Int) throws {
    let loop = EmbeddedEventLoop()
    var pending: [EventLoopPromise<Int>] = []
    pending.reserveCapacity(count)
    printBytesPerPending(count) {
        for _ in 0..<count {
            let promise = loop.makePromise(of: Int.self)
            promise.futureResult.whenSuccess { sink($0) }
            pending.append(promise)
        }
        return 0
    }
    for promise in pending { promise.succeed(1) }
    try loop.syncShutdownGracefully()
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[2]), count >= 0 else {
    fatalError("usage: CallgrindDriver <scenario> <count>")
}

switch arguments[1] {
case "futurelib-promise": futureLibPromise(count)
case "nio-promise": try nioPromise(count)
case "futurelib-map": futureLibMap(count)
case "nio-map": try nioMap(count)
case "futurelib-sequence": futureLibSequence(count)
case "nio-sequence": try nioSequence(count)
case "futurelib-pending": futureLibPending(count)
case "nio-pending": try nioPending(count)
case "cancellation-register": cancellationRegister(count)
case "cancellation-register-striped": cancellationRegisterStriped(count)
case "cancellation-cancel": cancellationCancel(count)
case "scaling-cancel-pending": scalingCancelPending(count)
case let scenario where scenario.hasPrefix("futurelib-cancel-pending-"):
    guard let pending = Int(scenario.dropFirst("futurelib-cancel-pending-".count)), pending > 0 else {
        fatalError("usage: CallgrindDriver futurelib-cancel-pending-<N> <count>")
    }
    futureLibCancelPending(count, pending: pending)
case "mallinfo-futurelib": mallinfoFutureLib(count)
case "mallinfo-nio": try mallinfoNIO(count)
default:
    fatalError("unknown scenario \(arguments[1])")
}
