import Foundation
import FutureLib
import FutureTestSupport
import Synchronization
import TestSupport
import Testing

/// Blocking never starves (Guarantees.md): every blocking wait of the library, called from work
/// on a FutureLib context, lets the work it waits for run: the pool starts a thread for each
/// blocked one, and a job of a `LimitedExecutionContext` gives up its slot while it blocks. The
/// waits that would hang without that run in child processes (exit tests), so that a regression
/// fails the test instead of hanging the run.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct BlockingWaitTests {
    /// The child's standard error, where ``require(_:_:)`` says which check failed.
    private func expectSuccess(_ result: ExitTest.Result?) {
        guard let result, result.exitStatus != .exitCode(0) else { return }
        Issue.record("\(String(decoding: result.standardErrorContent, as: UTF8.self))")
    }

    @Test func `token.wait(timeout:) in .default work lets the .default work that cancels the token run`() async throws
    {
        // More waiters than the pool keeps runnable threads (one per processor, at least two): the
        // canceller, queued behind them all, runs only if the pool starts a thread for each blocked one.
        let waiters = max(2, ProcessInfo.processInfo.activeProcessorCount) + 4
        let request = CancellationRequest()
        let waits = (0..<waiters).map { _ in
            Future<Bool>(on: .default) { request.token.wait(timeout: HangLimit.timeout(.seconds(10))) }
        }
        DefaultExecutionContext().execute { request.cancel() }
        let cancelled = try await waits.sequence().value()
        #expect(cancelled == Array(repeating: true, count: waiters))  // none timed out
    }

    @Test func `unregisterAndWait() in .default work lets the running handler get a pool thread`() async throws {
        // More waiters than the pool keeps runnable threads (one per processor, at least two), each
        // in `unregisterAndWait()` for a handler running on a thread of the test's; the handler then
        // needs a pool thread twice: for the waiters queued behind the first ones to reach their
        // wait, and for a `.default` future it waits for. Both run only if the pool starts a thread
        // for each blocked waiter (before, all of them timed out: the pool never knew).
        let waiters = max(2, ProcessInfo.processInfo.activeProcessorCount) + 4
        let request = CancellationRequest()
        let arrived = Atomic<Int>(0)
        let allArrived = DispatchSemaphore(value: 0)
        let outcome = Locked<(allArrived: Bool, inner: Int?)>((false, nil))
        let registration = Locked<CancellationRegistration?>(nil)
        let handlerStarted = DispatchSemaphore(value: 0)
        let waits = Locked<[Future<Bool>]>([])
        registration.withLock {
            $0 = request.token.onCancel {
                handlerStarted.signal()
                let all = allArrived.wait(timeout: .now() + 30 * LoadScaledClock.maximumSlowdown) == .success
                let inner = try? Future(on: .default) { 42 }.value(timeout: HangLimit.timeout(.seconds(30)))
                outcome.withLock { $0 = (all, inner) }
            }
        }
        await onDedicatedThread {
            let canceller = Thread { request.cancel() }
            canceller.start()
            handlerStarted.wait()  // the handler runs on `canceller` from here on
            let registration = registration.value!
            waits.withLock {
                $0 = (0..<waiters).map { _ in
                    Future<Bool>(on: .default) {
                        if arrived.add(1, ordering: .relaxed).newValue == waiters { allArrived.signal() }
                        registration.unregisterAndWait()
                        return true
                    }
                }
            }
        }
        let returned = try await waits.value.sequence().value()
        #expect(returned.count == waiters)
        let (all, inner) = outcome.value
        #expect(all, "only \(arrived.load(ordering: .relaxed)) of \(waiters) waiters got a pool thread")
        #expect(inner == 42)
    }

    @Test func `every blocking wait in a job of a serial LimitedExecutionContext lets the work queued behind it run`()
        async
    {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            Scenario.serialWaits()
        }
        expectSuccess(result)
    }

    @Test func `the slots of nested and wider capped contexts are given up and taken back`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            Scenario.nestedAndWideWaits()
        }
        expectSuccess(result)
    }

    /// A waiting job takes its slot back before its wait returns: a serial context still runs one
    /// job at a time, its jobs interleaving only at a blocking wait, as an actor's methods do at
    /// an `await`.
    @Test func `a serial LimitedExecutionContext never runs two jobs at once, however its jobs block`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            Scenario.serialExclusion()
        }
        expectSuccess(result)
    }
}

/// The bodies of the exit tests above: synchronous, since they block (an exit test's body is async).
private enum Scenario {
    static func serialWaits() {
        stopIfStuck(after: 60)
        let serial = LimitedExecutionContext(maxConcurrency: 1)
        let value = Future(on: serial) { try Future(on: serial) { 21 }.value() * 2 }
        require((try? value.value()) == 42, "value(): \(String(describing: value.result))")

        let timed = Future(on: serial) {
            try Future(on: serial) { 21 }.value(timeout: HangLimit.timeout(.seconds(30))) * 2
        }
        require((try? timed.value()) == 42, "value(timeout:): \(String(describing: timed.result))")

        let waited = Future(on: serial) { Future(on: serial) { 21 }.wait(timeout: HangLimit.timeout(.seconds(30))) }
        require((try? waited.value()) == true, "wait(timeout:): \(String(describing: waited.result))")

        let request = CancellationRequest()
        let token = Future(on: serial) {
            serial.execute { request.cancel() }
            return request.token.wait(timeout: HangLimit.timeout(.seconds(30)))
        }
        require((try? token.value()) == true, "token.wait(timeout:): \(String(describing: token.result))")

        // unregisterAndWait() for a handler, running on another thread, that waits for a job
        // queued on the context behind the one that waits for it.
        let handled = CancellationRequest()
        let jobWaits = DispatchSemaphore(value: 0)
        let handlerGot = Locked<Int?>(nil)
        let handlerStarted = DispatchSemaphore(value: 0)
        let registration = handled.token.onCancel {
            handlerStarted.signal()
            jobWaits.wait()
            let got = try? Future(on: serial) { 7 }.value(timeout: HangLimit.timeout(.seconds(30)))
            handlerGot.withLock { $0 = got }
        }
        Thread { handled.cancel() }.start()
        handlerStarted.wait()
        let unregistered = Future(on: serial) { () -> Bool in
            jobWaits.signal()
            registration.unregisterAndWait()
            return true
        }
        require((try? unregistered.value()) == true, "unregisterAndWait(): \(String(describing: unregistered.result))")
        require(handlerGot.value == 7, "unregisterAndWait(): the handler got \(String(describing: handlerGot.value))")

        // A blocked job does not count: while it waits, only the job that asks runs.
        let gate = Promise<Int>()
        let blocked = Future(on: serial) { try gate.future.value() }
        let running = Future(on: serial) { serial.runningCount }  // runs while `blocked` waits
        require((try? running.value()) == 1, "runningCount: \(String(describing: running.result))")
        gate.fulfill(5)
        require((try? blocked.value()) == 5, "blocked: \(String(describing: blocked.result))")
    }

    static func nestedAndWideWaits() {
        stopIfStuck(after: 60)
        // A capped context on a capped context: the waiting job holds a slot of each.
        let outer = LimitedExecutionContext(maxConcurrency: 1)
        let inner = LimitedExecutionContext(maxConcurrency: 1, on: outer)
        let nested = Future(on: inner) { try Future(on: outer) { try Future(on: inner) { 1 }.value() + 1 }.value() }
        require((try? nested.value()) == 2, "nested: \(String(describing: nested.result))")

        // As many waiting jobs as the cap, and the work they wait for queued behind them.
        let wide = LimitedExecutionContext(maxConcurrency: 3)
        let gate = Promise<Void>()
        let waiters = (0..<3).map { index in
            Future(on: wide) { () throws -> Int in
                try gate.future.value()
                return index
            }
        }
        wide.execute { gate.fulfill(()) }
        let values = try? waiters.sequence().value()
        require(values == [0, 1, 2], "wide: \(String(describing: values))")
    }

    static func serialExclusion() {
        stopIfStuck(after: 120)
        let serial = LimitedExecutionContext(maxConcurrency: 1)
        let inside = Counter()
        let overlaps = Counter()
        @Sendable func enter() {
            if inside.increment() != 1 { overlaps.increment() }
        }
        @Sendable func leave() { inside.decrement() }
        for round in 0..<200 {
            let handOff = Promise<Int>()
            let waiter = Future(on: serial) { () throws -> Int in
                enter()
                serial.execute {  // queued behind the waiter: it runs while the waiter blocks
                    enter()
                    handOff.fulfill(round)  // ends the wait while this job still runs
                    for _ in 0..<(round % 7) * 100 { _ = inside.value }
                    leave()
                }
                leave()
                let value = try handOff.future.value()
                enter()
                defer { leave() }
                return value
            }
            require((try? waiter.value()) == round, "round \(round): \(String(describing: waiter.result))")
        }
        require(overlaps.value == 0, "\(overlaps.value) overlaps")
    }
}
