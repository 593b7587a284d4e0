import Dispatch
import Foundation
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// Blocking never starves, on a `DispatchQueue` (Guarantees.md): a blocking wait running on a
/// queue other than the main queue runs the FutureLib work queued on that queue while it waits,
/// so a serial queue blocked by the waiter still gets through the work the wait needs. Each case
/// runs in a child process (an exit test), so that a regression fails instead of hanging the run.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct SerialQueueWaitTests {
    /// The child's standard error, where ``require(_:_:)`` says which check failed.
    private func expectSuccess(_ result: ExitTest.Result?) {
        guard let result, result.exitStatus != .exitCode(0) else { return }
        Issue.record("\(String(decoding: result.standardErrorContent, as: UTF8.self))")
    }

    @Test func `every blocking wait in a job of a serial queue runs the work queued behind it`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            QueueScenario.everyWait()
        }
        expectSuccess(result)
    }

    @Test func `a wait in a block of the caller's own on the queue, or in queue.sync, runs the queue's work too`()
        async
    {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            QueueScenario.waitsOutsideJobs()
        }
        expectSuccess(result)
    }

    @Test func `nested waits on a serial queue each end, in whatever order their work comes`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            QueueScenario.nestedWaits()
        }
        expectSuccess(result)
    }

    @Test func `a timed wait on a serial queue still times out, having run the work queued behind it once`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            QueueScenario.timeouts()
        }
        expectSuccess(result)
    }

    @Test func `a serial queue runs its FutureLib work in order, one job at a time, with or without a waiter`()
        async
    {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            QueueScenario.order()
        }
        expectSuccess(result)
    }

    @Test func `a job of a serial LimitedExecutionContext on a serial queue may wait for work queued behind it`()
        async
    {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            QueueScenario.cappedOnASerialQueue()
        }
        expectSuccess(result)
    }

    @Test func `a concurrent queue still runs its jobs at once, and waits on it or on a global queue end`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            QueueScenario.concurrentQueues()
        }
        expectSuccess(result)
    }
}

/// The bodies of the exit tests above: synchronous, since they block.
private enum QueueScenario {
    static func everyWait() {
        stopIfStuck(after: 60)
        let queue = DispatchQueue(label: "SerialQueueWaitTests.every")
        let value = Future(on: queue) { try Future(on: queue) { 21 }.value() * 2 }
        require((try? value.value()) == 42, "value(): \(String(describing: value.result))")

        let timed = Future(on: queue) {
            try Future(on: queue) { 21 }.value(timeout: HangLimit.timeout(.seconds(30))) * 2
        }
        require((try? timed.value()) == 42, "value(timeout:): \(String(describing: timed.result))")

        let waited = Future(on: queue) { Future(on: queue) { 21 }.wait(timeout: HangLimit.timeout(.seconds(30))) }
        require((try? waited.value()) == true, "wait(timeout:): \(String(describing: waited.result))")

        let request = CancellationRequest()
        let token = Future(on: queue) {
            queue.execute { request.cancel() }
            return request.token.wait(timeout: HangLimit.timeout(.seconds(30)))
        }
        require((try? token.value()) == true, "token.wait(timeout:): \(String(describing: token.result))")

        // Work that completes the future without FutureLib knowing which: a continuation on the
        // queue, and a promise fulfilled by a later job, read through a `.synchronous` map.
        let mapped = Future(on: queue) { try Future(value: 20).map(on: queue) { $0 + 1 }.value() }
        require((try? mapped.value()) == 21, "map(on:): \(String(describing: mapped.result))")
        let promise = Promise<Int>()
        let fulfilled = Future(on: queue) { () throws -> Int in
            queue.execute { promise.fulfill(6) }
            return try promise.future.map { $0 * 7 }.value()
        }
        require((try? fulfilled.value()) == 42, "promise: \(String(describing: fulfilled.result))")
    }

    static func waitsOutsideJobs() {
        stopIfStuck(after: 60)
        let queue = DispatchQueue(label: "SerialQueueWaitTests.outside")
        let fromBlock = Locked<Int?>(nil)
        let blockDone = DispatchSemaphore(value: 0)
        queue.async {
            let value = try? Future(on: queue) { 5 }.value()
            fromBlock.withLock { $0 = value }
            blockDone.signal()
        }
        require(
            blockDone.wait(timeout: .now() + 30 * LoadScaledClock.maximumSlowdown) == .success,
            "a block of the caller's own never returned"
        )
        require(fromBlock.value == 5, "a block of the caller's own: \(String(describing: fromBlock.value))")

        // `sync` runs the block on this thread, on behalf of the queue.
        let fromSync = queue.sync { try? Future(on: queue) { 6 }.map(on: queue) { $0 + 1 }.value() }
        require(fromSync == 7, "queue.sync: \(String(describing: fromSync))")

        // A `map(on:)` on a pending future, read on a queue FutureLib has queued nothing on yet:
        // its work reaches the queue only once the wait has begun.
        let fresh = DispatchQueue(label: "SerialQueueWaitTests.fresh")
        let source = Promise<Int>()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { source.fulfill(8) }
        let fromFresh = fresh.sync {
            try? source.future.map(on: fresh) { $0 + 1 }.value(timeout: HangLimit.timeout(.seconds(30)))
        }
        require(fromFresh == 9, "a queue new to FutureLib: \(String(describing: fromFresh))")
    }

    static func nestedWaits() {
        stopIfStuck(after: 60)
        let queue = DispatchQueue(label: "SerialQueueWaitTests.nested")
        // Each level waits for the next, queued behind it.
        @Sendable func nested(_ level: Int) throws -> Int {
            guard level > 0 else { return 0 }
            return try Future(on: queue) { try nested(level - 1) + 1 }.value(timeout: HangLimit.timeout(.seconds(30)))
        }
        let depth = Future(on: queue) { try nested(50) }
        require((try? depth.value()) == 50, "depth: \(String(describing: depth.result))")

        // The outer wait's work comes first, the inner wait's last: the outer one ends only once
        // the inner one (which runs above it on the thread) has.
        let outerWork = Promise<Int>()
        let innerWork = Promise<Int>()
        let outer = Future(on: queue) { () throws -> Int in
            let inner = Future(on: queue) { try innerWork.future.value() }
            queue.execute { outerWork.fulfill(1) }
            queue.execute { innerWork.fulfill(2) }
            return try outerWork.future.value() + inner.value()
        }
        require((try? outer.value()) == 3, "interleaved: \(String(describing: outer.result))")
    }

    static func timeouts() {
        stopIfStuck(after: 60)
        let queue = DispatchQueue(label: "SerialQueueWaitTests.timeouts")
        let never = Promise<Int>()
        let ran = Counter()
        let outcome = Future(on: queue) { () -> [String] in
            queue.execute { ran.increment() }  // queued behind: runs while the waits wait
            var outcomes: [String] = []
            do {
                _ = try never.future.value(timeout: .milliseconds(50))
                outcomes.append("value")
            } catch {
                outcomes.append("\(error)")
            }
            outcomes.append("\(never.future.wait(timeout: .milliseconds(50)))")
            outcomes.append("\(CancellationRequest().token.wait(timeout: .milliseconds(50)))")
            return outcomes
        }
        let expected = ["\(FutureError.timeout)", "false", "false"]
        require((try? outcome.value()) == expected, "outcomes: \(String(describing: outcome.result))")
        queue.sync {}  // the block queued for the job the wait ran finds it gone
        require(ran.value == 1, "the job queued behind ran \(ran.value) times")
        require((try? Future(on: queue) { 3 }.value()) == 3, "the queue still works")
        withExtendedLifetime(never) {}
    }

    static func order() {
        stopIfStuck(after: 60)
        let queue = DispatchQueue(label: "SerialQueueWaitTests.order")
        let log = Locked<[String]>([])
        let inside = Counter()
        let overlaps = Counter()
        @Sendable func record(_ entry: String) {
            if inside.increment() != 1 { overlaps.increment() }
            log.withLock { $0.append(entry) }
            inside.decrement()
        }

        // No waiter: FutureLib's jobs and the caller's own blocks, interleaved, run as submitted.
        for index in 0..<300 {
            if index % 3 == 1 {
                queue.async { record("\(index)") }
            } else {
                queue.execute { record("\(index)") }
            }
        }
        queue.sync {}
        require(log.value == (0..<300).map { "\($0)" }, "without a waiter: \(log.value)")

        // A waiter runs the jobs queued behind it, in order, up to the one it waits for; the
        // caller's block among them waits for the queue, and the later jobs keep their order.
        log.withLock { $0 = [] }
        let target = Promise<Void>()
        let waiter = Future(on: queue) { () throws -> Void in
            record("waiter")
            try target.future.value()
            record("waiter done")
        }
        for index in 0..<10 {
            if index == 3 { queue.async { record("block") } }
            queue.execute {
                record("job \(index)")
                if index == 5 { target.fulfill(()) }
            }
        }
        require((try? waiter.value()) != nil, "waiter: \(String(describing: waiter.result))")
        queue.sync {}
        let expected =
            ["waiter"] + (0...5).map { "job \($0)" } + ["waiter done", "block"] + (6..<10).map { "job \($0)" }
        require(log.value == expected, "with a waiter: \(log.value)")
        require(overlaps.value == 0, "\(overlaps.value) jobs ran at once")
    }

    static func cappedOnASerialQueue() {
        stopIfStuck(after: 60)
        let queue = DispatchQueue(label: "SerialQueueWaitTests.capped")
        let capped = LimitedExecutionContext(maxConcurrency: 1, on: queue)
        let value = Future(on: capped) { try Future(on: capped) { 21 }.value() * 2 }
        require((try? value.value()) == 42, "value(): \(String(describing: value.result))")
        let onQueue = Future(on: capped) {
            try Future(on: queue) { 21 }.value(timeout: HangLimit.timeout(.seconds(30))) * 2
        }
        require((try? onQueue.value()) == 42, "value(timeout:): \(String(describing: onQueue.result))")
    }

    static func concurrentQueues() {
        stopIfStuck(after: 60)
        let concurrent = DispatchQueue(label: "SerialQueueWaitTests.concurrent", attributes: .concurrent)
        // Each job waits, with a plain semaphore, for the other to start: only jobs running at
        // the same time both get through.
        let first = DispatchSemaphore(value: 0)
        let second = DispatchSemaphore(value: 0)
        let a = Future(on: concurrent) { () -> Bool in
            first.signal()
            return second.wait(timeout: .now() + 30 * LoadScaledClock.maximumSlowdown) == .success
        }
        let b = Future(on: concurrent) { () -> Bool in
            second.signal()
            return first.wait(timeout: .now() + 30 * LoadScaledClock.maximumSlowdown) == .success
        }
        require((try? a.value()) == true && (try? b.value()) == true, "the jobs did not run at once")

        let nested = Future(on: concurrent) { try Future(on: concurrent) { 3 }.value() }
        require((try? nested.value()) == 3, "concurrent: \(String(describing: nested.result))")
        let global = DispatchQueue.global()
        let onGlobal = Future(on: global) {
            try Future(on: global) { 4 }.value(timeout: HangLimit.timeout(.seconds(30)))
        }
        require((try? onGlobal.value()) == 4, "global: \(String(describing: onGlobal.result))")
    }
}
