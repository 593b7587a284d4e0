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
//   futurelib-sequence-pending, futurelib-zip-pending, futurelib-results-pending, futurelib-first-completed,
//   futurelib-race, soak-first-completed: see Combinators.swift
//   futurelib-pending / nio-pending     1. `count` promises, each with one continuation, all pending at once, then
//                                          completed: run under `valgrind --tool=dhat` for the bytes per pending promise
//   cancellation-register               11. onCancel + unregister on one token, one thread (the uncontended path
//                                          that the shared-token striping must not slow down)
//   cancellation-register-striped       11. the same from a thread that is not the token's first (a request gets
//                                          stripes only from contention, which valgrind, running one thread at a
//                                          time, does not produce here: this measures the unstriped path too)
//   cancellation-cancel                 6. a request with 10 handlers, cancelled (LIFO run of the handlers)
//   cancellation-linked                 15. (its cancellation part) a client request and a request linked to it and
//                                          a long-lived token, with a handler, then the client cancelled (the
//                                          linked request fires and leaves the long-lived token)
//   futurelib-cancel-pending-<N>        8. N continuations pending on one promise, each with its own token; one
//                                          operation cancels a random one's token (removing it from the future)
//                                          and registers a replacement, so that N stay pending
//   scaling-cancel-pending              8. not for valgrind: the wall-clock time per cancel of the same, for
//                                          N = 10^3 ... 10^6, the median of `count` rounds of 1,000 cancels each
//   stream-unsubscribe-<N>              N subscribers of one open stream, each with its own token; one operation
//                                          cancels a random one's token (unsubscribing it) and subscribes a
//                                          replacement, so that N stay subscribed
//   scaling-stream-unsubscribe          not for valgrind: the wall-clock time per unsubscribe of the same, as
//                                          scaling-cancel-pending
//   stream-publish                      12. (its producer's side) a value through a stream to its one `.synchronous`
//                                          subscriber
//   stream-lifecycle                    a stream's whole life: a `StreamPromise`, one `.synchronous` subscriber, a
//                                          value, `finish()`, both released
//   mallinfo-stream-subscriber          not for valgrind: heap bytes per subscriber of one stream, for `count`
//                                          subscribers, without a token and with one each
//   mallinfo-cancellation-request       not for valgrind: heap bytes per live request never cancelled, for `count`
//                                          requests, plain and with one handler each
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

/// The same on a token whose first registration came from another thread. (The design stripes a request only once its lock was found contended, so this is the unstriped path.)
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

/// The long-lived source of `cancellation-linked` (a server's shutdown token).
let shutdown = CancellationRequest()

func cancellationLinked(_ count: Int) {
    for _ in 0..<count {
        let client = CancellationRequest()
        let request = CancellationRequest(linkedTo: [shutdown.token, client.token])
        request.token.onCancel { sink(0) }
        client.cancel()
    }
}

/// What `count` subscriptions wait on, each registered with its own request's token: cancelling a request removes its
/// subscription (the server pattern: every request waits on one long-lived future or stream, and a disconnect
/// cancels its token).
protocol SubscriptionTarget {
    init()
    func subscribe(cancellationToken: CancellationToken)
    func finish()
}

/// Continuations pending on one promise (scenario 8).
struct PendingFuture: SubscriptionTarget {
    let promise = Promise<Int>()

    func subscribe(cancellationToken: CancellationToken) {
        promise.future.onSuccess(on: .synchronous, cancellationToken: cancellationToken) { sink($0) }
    }

    func finish() {
        promise.fulfill(1)
    }
}

/// Subscribers of one open stream (a server broadcasting on one stream to its clients).
struct OpenStream: SubscriptionTarget {
    let promise = StreamPromise<Int>(capacity: 0)

    func subscribe(cancellationToken: CancellationToken) {
        promise.stream.onSuccess(on: .synchronous, cancellationToken: cancellationToken) { sink($0) }
    }

    func finish() {
        promise.finish()
    }
}

final class PendingSubscriptions<Target: SubscriptionTarget> {
    let target = Target()
    var requests: [CancellationRequest] = []
    var random = SplitMix64(seed: 42)  // the same subscriptions in every run

    init(count: Int) {
        requests.reserveCapacity(count)
        for _ in 0..<count { requests.append(register()) }
    }

    func register() -> CancellationRequest {
        let request = CancellationRequest()
        target.subscribe(cancellationToken: request.token)
        return request
    }

    /// `count` distinct indices, picked at random.
    func randomIndices(_ count: Int) -> [Int] {
        Array(requests.indices.shuffled(using: &random).prefix(count))
    }

    func finish() {
        target.finish()
    }
}

/// With `pending` subscriptions: `count` times, cancels a random one's token and registers a replacement.
func cancelPending<Target: SubscriptionTarget>(_ count: Int, pending: Int, on _: Target.Type) {
    let fixture = PendingSubscriptions<Target>(count: pending)
    for _ in 0..<count {
        let index = Int.random(in: 0..<pending, using: &fixture.random)
        fixture.requests[index].cancel()
        fixture.requests[index] = fixture.register()
    }
    fixture.finish()
}

/// Wall-clock nanoseconds per cancel with N subscriptions pending, for N = 10^3 ... 10^6: the median of `rounds`
/// rounds, each cancelling 1,000 distinct subscriptions picked at random (then replaced, unmeasured).
func scalingCancelPending<Target: SubscriptionTarget>(_ rounds: Int, on _: Target.Type, _ what: String) {
    let perRound = 1_000
    for pending in [1_000, 10_000, 100_000, 1_000_000] {
        let fixture = PendingSubscriptions<Target>(count: pending)
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
        print("cancel \(what)'s token, \(pending) pending: \(samples[samples.count / 2]) ns per cancel")
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

/// The heap bytes of `count` live requests that are never cancelled: plain, then each with one handler stored.
func mallinfoCancellationRequest(_ count: Int) {
    var requests: [CancellationRequest] = []
    requests.reserveCapacity(count)
    let before = heapBytesInUse()
    for _ in 0..<count { requests.append(CancellationRequest()) }
    let plain = heapBytesInUse()
    for request in requests { request.token.onCancel { sink(0) } }
    let withHandler = heapBytesInUse()
    print("\(Double(plain - before) / Double(count)) bytes per request")
    print("\(Double(withHandler - before) / Double(count)) bytes per request with one handler")
    withExtendedLifetime(requests) {}
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

/// `count` values through a stream to its one subscriber, on `.synchronous`: the producer's side of scenario 12
/// (whose `for await` loop valgrind cannot run), which a change to how a stream keeps its subscribers must not slow.
func streamPublish(_ count: Int) {
    let promise = StreamPromise<Int>(capacity: 0)
    promise.stream.onSuccess(on: .synchronous) { sink($0) }
    for value in 0..<count { promise.fulfill(value) }
    promise.finish()
}

func streamLifecycle(_ count: Int) {
    for value in 0..<count {
        let promise = StreamPromise<Int>(capacity: 0)
        promise.stream.onSuccess(on: .synchronous) { sink($0) }
        promise.fulfill(value)
        promise.finish()
    }
}

/// Heap bytes per subscriber of one open stream, without a token and with one (the request, its registration and
/// the subscriber: what a server's client costs). The stream's array of subscribers is large enough for malloc to map
/// it apart, so these count the mapped bytes too.
func mallinfoStreamSubscriber(_ count: Int) {
    func bytes() -> Int { heapBytesInUse() + Int(malloc_info_bytes_mapped()) }
    let promise = StreamPromise<Int>(capacity: 0)
    var before = bytes()
    for _ in 0..<count { promise.stream.onSuccess(on: .synchronous) { sink($0) } }
    print("\(Double(bytes() - before) / Double(count)) bytes per stream subscriber")
    let withTokens = StreamPromise<Int>(capacity: 0)
    var requests: [CancellationRequest] = []
    requests.reserveCapacity(count)
    before = bytes()
    for _ in 0..<count {
        let request = CancellationRequest()
        withTokens.stream.onSuccess(on: .synchronous, cancellationToken: request.token) { sink($0) }
        requests.append(request)
    }
    print("\(Double(bytes() - before) / Double(count)) bytes per stream subscriber with its own token")
    promise.finish()
    withTokens.finish()
}

/// N in a `<prefix><N>` scenario name.
func pendingCount(_ scenario: String, _ prefix: String) -> Int {
    guard let pending = Int(scenario.dropFirst(prefix.count)), pending > 0 else {
        fatalError("usage: CallgrindDriver \(prefix)<N> <count>")
    }
    return pending
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
case "futurelib-sequence-pending": futureLibSequencePending(count)
case "futurelib-zip-pending": futureLibZipPending(count)
case "futurelib-results-pending": futureLibResultsPending(count)
case "futurelib-first-completed": futureLibFirstCompleted(count)
case "futurelib-race": futureLibRace(count)
case "soak-first-completed": soakFirstCompleted(count)
case "futurelib-pending": futureLibPending(count)
case "nio-pending": try nioPending(count)
case "cancellation-register": cancellationRegister(count)
case "cancellation-register-striped": cancellationRegisterStriped(count)
case "cancellation-cancel": cancellationCancel(count)
case "cancellation-linked": cancellationLinked(count)
case "scaling-cancel-pending": scalingCancelPending(count, on: PendingFuture.self, "a continuation")
case "scaling-stream-unsubscribe": scalingCancelPending(count, on: OpenStream.self, "a stream subscriber")
case let scenario where scenario.hasPrefix("futurelib-cancel-pending-"):
    cancelPending(count, pending: pendingCount(scenario, "futurelib-cancel-pending-"), on: PendingFuture.self)
case let scenario where scenario.hasPrefix("stream-unsubscribe-"):
    cancelPending(count, pending: pendingCount(scenario, "stream-unsubscribe-"), on: OpenStream.self)
case "mallinfo-futurelib": mallinfoFutureLib(count)
case "mallinfo-nio": try mallinfoNIO(count)
case "mallinfo-cancellation-request": mallinfoCancellationRequest(count)
case "mallinfo-stream-subscriber": mallinfoStreamSubscriber(count)
case "stream-publish": streamPublish(count)
case "stream-lifecycle": streamLifecycle(count)
default:
    fatalError("unknown scenario \(arguments[1])")
}
