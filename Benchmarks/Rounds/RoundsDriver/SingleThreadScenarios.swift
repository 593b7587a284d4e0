// The older scenarios (1–7, 9 of Documentation/Performance.md) in the same alternating rounds as 10–14, so that
// `make bench-report` has a FutureLib / peer ratio from one process for each of them (the benchmark harness runs
// each side on its own). Same code as the harness's benchmarks of the same number (Benchmarks/Benchmarks/*), with
// more operations per run so that a run takes milliseconds.

import Cancellation
import Dispatch
import FutureLib
import NIOCore
import NIOEmbedded
import NIOPosix
import Synchronization

/// Ends an `EmbeddedEventLoop` (the sides' closures are async, where NIO makes its synchronous shutdown unavailable;
/// an embedded loop's shutdown does not block).
func shutDown(_ loop: EmbeddedEventLoop) {
    do { try loop.syncShutdownGracefully() } catch { fatalError("\(error)") }
}

/// 1. promise + one continuation + completion vs NIO on an `EmbeddedEventLoop`.
func promiseWithOneContinuation() -> Scenario {
    let count = 20_000
    return Scenario(
        key: "1",
        name: "1 promise + 1 continuation + completion, per promise",
        futureLib: Side(name: "FutureLib", operations: count) {
            for _ in 0..<count {
                let promise = Promise<Int>()
                promise.future.onSuccess(on: .synchronous) { sink($0) }
                promise.fulfill(1)
            }
        },
        peer: Side(name: "NIO EmbeddedEventLoop", operations: count) {
            let loop = EmbeddedEventLoop()
            for _ in 0..<count {
                let promise = loop.makePromise(of: Int.self)
                promise.futureResult.whenSuccess { sink($0) }
                promise.succeed(1)
            }
            shutDown(loop)
        }
    )
}

/// 2. a chain of ten `map`s on a pending promise, then completion, vs NIO.
func mapChain() -> Scenario {
    let count = 2_000
    return Scenario(
        key: "2",
        name: "2 10-map chain on a pending promise, then completion, per chain",
        futureLib: Side(name: "FutureLib", operations: count) {
            for _ in 0..<count {
                let promise = Promise<Int>()
                var future = promise.future
                for _ in 0..<10 { future = future.map(on: .synchronous) { $0 &+ 1 } }
                future.onSuccess(on: .synchronous) { sink($0) }
                promise.fulfill(1)
            }
        },
        peer: Side(name: "NIO EmbeddedEventLoop", operations: count) {
            let loop = EmbeddedEventLoop()
            for _ in 0..<count {
                let promise = loop.makePromise(of: Int.self)
                var future = promise.futureResult
                for _ in 0..<10 { future = future.map { $0 &+ 1 } }
                future.whenSuccess { sink($0) }
                promise.succeed(1)
            }
            shutDown(loop)
        }
    )
}

/// 3. `sequence()` of 1,000 completed futures vs NIO's `whenAllSucceed` (the inputs are made outside the timing).
func sequenceOfCompleted() -> Scenario {
    let count = 20
    return Scenario(
        key: "3",
        name: "3 sequence() of 1,000 completed, per sequence",
        futureLib: Side.prepared(name: "FutureLib", operations: count) {
            let futures = (0..<1_000).map { Future(value: $0) }
            return {
                for _ in 0..<count { futures.sequence().onSuccess(on: .synchronous) { sink($0.count) } }
            }
        },
        peer: Side.prepared(name: "NIO whenAllSucceed", operations: count) {
            let loop = EmbeddedEventLoop()
            let futures = (0..<1_000).map { loop.makeSucceededFuture($0) }
            return {
                for _ in 0..<count {
                    EventLoopFuture.whenAllSucceed(futures, on: loop).whenSuccess { sink($0.count) }
                }
                shutDown(loop)
            }
        }
    )
}

private let continuationQueue = DispatchQueue(label: "rounds.continuations")

/// 4. completion here, continuation on another thread (throughput): a serial `DispatchQueue` vs an event loop.
func continuationOnAnotherThread() -> Scenario {
    let count = 10_000
    let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    return Scenario(
        key: "4",
        name: "4 completion here, continuation on another thread, per promise",
        futureLib: Side(name: "FutureLib on a DispatchQueue", operations: count) {
            let countdown = Countdown(count)
            for _ in 0..<count {
                let promise = Promise<Int>()
                promise.future.onSuccess(on: continuationQueue) { _ in countdown.arrive() }
                promise.fulfill(1)
            }
            countdown.wait()
        },
        peer: Side(name: "NIO event loop", operations: count) {
            let countdown = Countdown(count)
            for _ in 0..<count {
                let promise = eventLoop.makePromise(of: Int.self)
                promise.futureResult.whenSuccess { _ in countdown.arrive() }
                promise.succeed(1)
            }
            countdown.wait()
        }
    )
}

/// 5. `onCancel` + `unregister()` vs a `withTaskCancellationHandler` scope.
func registerUnregister() -> Scenario {
    let count = 50_000
    let request = CancellationRequest()
    return Scenario(
        key: "5",
        name: "5 onCancel + unregister vs withTaskCancellationHandler, per scope",
        futureLib: Side(name: "FutureLib", operations: count) {
            let token = request.token
            for _ in 0..<count {
                if !token.onCancel({}).unregister() { sink(-1) }
            }
        },
        peer: Side(name: "withTaskCancellationHandler", operations: count) {
            for _ in 0..<count {
                await withTaskCancellationHandler {
                    sink(0)
                } onCancel: {
                }
            }
        }
    )
}

/// 6. `cancel()` of a request with 1,000 handlers, per handler, vs one uncontended `Mutex.withLock`. The handlers
/// are registered outside the timing.
func cancelThousandHandlers() -> Scenario {
    let requests = 10
    let handlers = 1_000
    return Scenario(
        key: "6",
        name: "6 cancel(), 1,000 handlers per request, per handler",
        futureLib: Side.prepared(name: "FutureLib", operations: requests * handlers) {
            let pending = (0..<requests).map { _ in CancellationRequest() }
            for request in pending {
                let token = request.token
                for _ in 0..<handlers { token.onCancel { sink(0) } }
            }
            return {
                for request in pending { request.cancel() }
            }
        },
        peer: Side(name: "Mutex.withLock", operations: requests * handlers) {
            let mutex = Mutex(0)
            for _ in 0..<(requests * handlers) { mutex.withLock { $0 &+= 1 } }
            sink(mutex.withLock { $0 })
        }
    )
}

/// 7. `value() async` on a completed future vs `await task.value` on a finished task.
func valueOnCompleted() -> Scenario {
    let count = 100_000
    let future = Future(value: 1)
    let task = Task { 1 }
    return Scenario(
        key: "7",
        name: "7 value() async on a completed future, per await",
        futureLib: Side(name: "FutureLib", operations: count) {
            for _ in 0..<count { sink(try await future.value()) }
        },
        peer: Side(name: "await task.value", operations: count) {
            for _ in 0..<count { sink(await task.value) }
        }
    )
}

/// 9. an async `map` on a completed future, awaited, vs `Future { async }` awaited (target: at most 1.5×).
func asyncMap() -> Scenario {
    let count = 5_000
    let completed = Future(value: 1)
    return Scenario(
        key: "9",
        name: "9 async map on a completed future vs Future { async }, awaited",
        futureLib: Side(name: "async map", operations: count) {
            for _ in 0..<count { sink(try await completed.map { value async in value + 1 }.value()) }
        },
        peer: futureAsyncAwaited(count)
    )
}

/// The peer of the async-combinator scenarios: `count` times one `Future { async }`, awaited.
func futureAsyncAwaited(_ count: Int) -> Side {
    Side(name: "Future { async }", operations: count) {
        for _ in 0..<count { sink(try await Future { () async throws -> Int in 2 }.value()) }
    }
}

/// 9. an async `flatMap` on a completed future (its closure returns a completed future), awaited, vs
/// `Future { async }` awaited: the cost of the combinator over the task it runs, as for `map` above.
func asyncFlatMap() -> Scenario {
    let count = 5_000
    let completed = Future(value: 1)
    return Scenario(
        key: "9-flatMap",
        name: "9 async flatMap on a completed future vs Future { async }, awaited",
        futureLib: Side(name: "async flatMap", operations: count) {
            for _ in 0..<count { sink(try await completed.flatMap { value async in Future(value: value + 1) }.value()) }
        },
        peer: futureAsyncAwaited(count)
    )
}

/// The error the recover scenario recovers from (not a `CancellationError`, which `recover` passes on).
struct RoundsError: Error {}

/// 9. an async `recover` on a failed future, awaited, vs `Future { async }` awaited.
func asyncRecover() -> Scenario {
    let count = 5_000
    let failed = Future<Int>(error: RoundsError())
    return Scenario(
        key: "9-recover",
        name: "9 async recover on a failed future vs Future { async }, awaited",
        futureLib: Side(name: "async recover", operations: count) {
            for _ in 0..<count { sink(try await failed.recover { _ async in 2 }.value()) }
        },
        peer: futureAsyncAwaited(count)
    )
}

/// 9. an async `onSuccess` on a completed future, its task resuming a continuation that is awaited, vs
/// `Future { async }` whose task resumes a continuation that is awaited the same way.
///
/// The peer waits as the scenario does. The former peer, `Future { async }` awaited with `value()`,
/// watches for the result before it suspends (`AwaitSpin`), which a raw continuation cannot: the
/// ratio then measured the wake-up of the parked cooperative thread that FutureLib's pool thread
/// resumes, not FutureLib's code. Against this peer, the ratio is the
/// cost of `onSuccess` over the task both run (Documentation/Internals.md, "The worker pool and
/// `Future { async … }`").
func asyncOnSuccess() -> Scenario {
    let count = 5_000
    let completed = Future(value: 1)
    return Scenario(
        key: "9-onSuccess",
        name: "9 async onSuccess on a completed future vs Future { async }, each resuming an awaited continuation",
        futureLib: Side(name: "async onSuccess", operations: count) {
            for _ in 0..<count {
                let value = await withUnsafeContinuation { (continuation: UnsafeContinuation<Int, Never>) in
                    completed.onSuccess { value async in continuation.resume(returning: value + 1) }
                }
                sink(value)
            }
        },
        peer: Side(name: "Future { async }", operations: count) {
            for _ in 0..<count {
                let value = await withUnsafeContinuation { (continuation: UnsafeContinuation<Int, Never>) in
                    _ = Future { () async -> Int in
                        continuation.resume(returning: 2)
                        return 2
                    }
                }
                sink(value)
            }
        }
    )
}

/// 9. `traverse` with an async task over 100 elements, awaited, vs 100 `Future { async }` and `sequence()`
/// awaited; per element.
func asyncTraverse() -> Scenario {
    let rounds = 50
    let elements = Array(0..<100)
    return Scenario(
        key: "9-traverse",
        name: "9 traverse with an async task vs Future { async } + sequence(), awaited, per element",
        futureLib: Side(name: "async traverse", operations: rounds * elements.count) {
            for _ in 0..<rounds { sink(try await elements.traverse { value async in value }.value().count) }
        },
        peer: Side(name: "Future { async } + sequence()", operations: rounds * elements.count) {
            for _ in 0..<rounds {
                sink(
                    try await elements.map { value in Future { () async throws -> Int in value } }.sequence().value()
                        .count
                )
            }
        }
    )
}

/// 9. `Future { async }` awaited vs `Task { }` awaited.
func asyncFutureVersusTask() -> Scenario {
    let count = 5_000
    return Scenario(
        key: "9-task",
        name: "9 Future { async } vs Task { }, awaited",
        futureLib: Side(name: "Future { async }", operations: count) {
            for _ in 0..<count { sink(try await Future { () async throws -> Int in 2 }.value()) }
        },
        peer: Side(name: "Task { }", operations: count) {
            for _ in 0..<count { sink(await Task { 2 }.value) }
        }
    )
}
