import Cancellation
import Dispatch
import Foundation
import FutureLib
import Testing

// Blocking on every kind of thread: `value()`, `wait(timeout:)` and `CancellationToken.wait` from
// `.default` work, from a `LimitedExecutionContext`, from the cooperative pool and from a serial
// `DispatchQueue`, while the work they wait for needs a thread of the same kind. Each case runs in
// a child process with a watchdog: a starved or deadlocked wait fails it instead of hanging.

enum Blocking {
    /// More waiters than the machine has cores: a pool that did not compensate would run out.
    static let waiters = ProcessInfo.processInfo.activeProcessorCount * 2 + 2

    static func valueFromDefaultWork() {
        failAfter(seconds: 60)
        let gate = Promise<Int>()
        let results = (0..<waiters).map { _ in Future(on: .default) { try gate.future.value() } }
        Future<Void>(on: .default) { gate.fulfill(7) }.onComplete { _ in }
        for result in results {
            guard (try? result.value(timeout: patient(.seconds(50)))) == 7 else {
                fatalError("a .default waiter starved")
            }
        }
    }

    static func tokenWaitFromDefaultWork() {
        failAfter(seconds: 60)
        let request = CancellationRequest()
        let waiters = (0..<waiters).map { _ in
            Future(on: .default) { request.token.wait(timeout: patient(.seconds(45))) }
        }
        Future<Void>(on: .default) { request.cancel() }.onComplete { _ in }
        for waiter in waiters {
            guard (try? waiter.value(timeout: patient(.seconds(50)))) == true else {
                fatalError("token.wait in .default work starved the canceller")
            }
        }
    }

    static func futureWaitFromDefaultWork() {
        failAfter(seconds: 60)
        let gate = Promise<Int>()
        let waiters = (0..<waiters).map { _ in Future(on: .default) { gate.future.wait(timeout: patient(.seconds(45))) }
        }
        Future<Void>(on: .default) { gate.fulfill(1) }.onComplete { _ in }
        for waiter in waiters {
            guard (try? waiter.value(timeout: patient(.seconds(50)))) == true else {
                fatalError("wait(timeout:) in .default work starved the completer")
            }
        }
    }

    static func valueInsideALimitedContext() {
        failAfter(seconds: 30)
        let context = LimitedExecutionContext(maxConcurrency: 1)
        let outer = Future(on: context) { () throws -> Int in
            let inner = Future(on: context) { 1 }
            do {
                return try inner.value()
            } catch FutureError.deadlock {
                return -1  // detected: the documented alternative to running the inner work
            }
        }
        guard let value = try? outer.value(timeout: patient(.seconds(25))), value == 1 || value == -1 else {
            fatalError(
                "value() on work queued behind it on a LimitedExecutionContext(maxConcurrency: 1) never returned"
            )
        }
    }

    static func valueOnASerialQueue() {
        failAfter(seconds: 30)
        let queue = DispatchQueue(label: "attack.serial")
        let outer = Future(on: queue) { () throws -> Int in
            let inner = Future(on: queue) { 1 }
            do {
                return try inner.value()
            } catch FutureError.deadlock {
                return -1
            }
        }
        guard let value = try? outer.value(timeout: patient(.seconds(25))), value == 1 || value == -1 else {
            fatalError("value() on work queued behind it on a serial queue never returned")
        }
    }

    static func valueFromTheCooperativePool() async {
        failAfter(seconds: 60)
        let gate = Promise<Int>()
        let tasks = (0..<waiters).map { _ in
            Task.detached { () -> Int? in blockingValue(of: gate.future) }
        }
        // Completed by async work: `Future { … }` runs on FutureLib's threads, not on the blocked pool.
        let completer = Future { () async throws -> Int in
            gate.fulfill(3)
            return 0
        }
        _ = completer
        for task in tasks {
            guard await task.value == 3 else { fatalError("value() on the cooperative pool starved its completer") }
        }
    }
}

/// The blocking `value(timeout:)`, called from a synchronous function, as a task's synchronous
/// helper would: it blocks the cooperative thread it runs on.
func blockingValue(of future: Future<Int>) -> Int? {
    try? future.value(timeout: patient(.seconds(45)))
}

extension Attacks {
    @Suite(.serialized, .timeLimit(.minutes(AttackLimit.minutes(5))))
    struct BlockingAttacks {
        @Test func `value() in more default work than there are threads, completed by default work`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    Blocking.valueFromDefaultWork()
                }
            )
        }

        @Test
        func `token wait in more default work than there are threads, cancelled by default work`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    Blocking.tokenWaitFromDefaultWork()
                }
            )
        }

        @Test func `wait(timeout:) in more default work than there are threads, completed by default work`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    Blocking.futureWaitFromDefaultWork()
                }
            )
        }

        @Test
        func `value() inside a LimitedExecutionContext on work queued behind it`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    Blocking.valueInsideALimitedContext()
                }
            )
        }

        @Test func `value() on a serial queue on work queued behind it`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    Blocking.valueOnASerialQueue()
                }
            )
        }

        @Test func `value() on every cooperative thread, completed by async work`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    await Blocking.valueFromTheCooperativePool()
                }
            )
        }
    }
}
