import Foundation
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// Every number FutureLib takes has a meaning, however extreme (Guarantees.md, "Inputs that are
/// not valid"): `Backoff`'s delays, multiplier, jitter and retry numbers, every API that takes a
/// `Duration`, counts and capacities at their extremes. Properties over the whole space, edges
/// first (``Arbitrary``); each runs in a child process, so that a trap or a loop that never ends
/// fails the test instead of taking the run down.
@Suite(.timeLimit(.minutes(HangLimit.minutes(5))))
struct NumberPropertyTests {
    /// The child's standard error, where ``require(_:_:)`` says which case failed.
    private func expectSuccess(_ result: ExitTest.Result?) {
        guard let result, result.exitStatus != .exitCode(0) else { return }
        Issue.record("\(String(decoding: result.standardErrorContent, as: UTF8.self))")
    }

    // MARK: - Backoff

    @Test func `Backoff: any delays, multiplier, jitter source and retry number give a delay within the cap`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            stopIfStuck()  // `delay(beforeRetry: Int.max)` once looped once per retry
            var arbitrary = Arbitrary(seed: 11)
            let retries = arbitrary.ints(PropertyCases.count * 4)
            for (index, retry) in retries.enumerated() {
                let initial = arbitrary.duration()
                let maximum = arbitrary.duration()
                let multiplier = index < Arbitrary.doubleEdges.count ? Arbitrary.doubleEdges[index] : arbitrary.double()
                let fraction = arbitrary.double()
                let random = arbitrary.double()
                let context =
                    "initial \(describe(initial)), maximum \(describe(maximum)), multiplier \(multiplier), "
                    + "retry \(retry), fraction \(fraction), random \(random)"

                let cap = max(maximum, .zero)
                let exponential = Backoff.exponential(initial: initial, multiplier: multiplier, maximum: maximum)
                let delay = exponential.delay(beforeRetry: retry)
                require(delay >= .zero && delay <= cap, "\(context): \(describe(delay)) outside 0...maximum")
                if retry <= 1 || !(multiplier > 1) {
                    require(delay == min(max(initial, .zero), cap), "\(context): \(describe(delay)) is not initial")
                }
                let next = exponential.delay(beforeRetry: retry == .max ? retry : retry + 1)
                require(next >= delay, "\(context): the next delay \(describe(next)) is shorter")
                let jittered = exponential.jittered(by: fraction, random: { random }).delay(beforeRetry: retry)
                require(jittered >= .zero && jittered <= delay, "\(context): jittered \(describe(jittered))")

                let constant = Backoff.constant(initial)
                require(constant.delay(beforeRetry: retry) == max(initial, .zero), "\(context): constant")
                let jitteredConstant = constant.jittered(by: fraction, random: { random }).delay(beforeRetry: retry)
                require(
                    jitteredConstant >= .zero && jitteredConstant <= max(initial, .zero),
                    "\(context): jittered constant \(describe(jitteredConstant))"
                )
            }
        }
        expectSuccess(result)
    }

    @Test func `Backoff: doubling delays are exact, whatever the retry number`() {
        var arbitrary = Arbitrary(seed: 12)
        for _ in 0..<PropertyCases.count * 4 {
            let initial = Duration.milliseconds(1 + abs(arbitrary.int() % 10_000))
            let maximum = Duration.seconds(1 + abs(arbitrary.int() % 1_000_000_000))
            let retry = 1 + abs(arbitrary.int() % 100)
            var expected = initial.attoseconds
            for _ in 1..<retry where expected < maximum.attoseconds { expected *= 2 }
            let backoff = Backoff.exponential(initial: initial, maximum: maximum)
            #expect(backoff.delay(beforeRetry: retry) == min(Duration(attoseconds: expected), maximum))
        }
    }

    // MARK: - Durations

    /// On a manual clock: each API waits until the clock reaches `now + delay`, saturated at
    /// `.seconds(Int64.max)`, and negative delays count as zero.
    @Test func `every API that takes a Duration takes any duration on a manual clock`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            stopIfStuck()
            var arbitrary = Arbitrary(seed: 13)
            for delay in arbitrary.durations(PropertyCases.count / 2) {
                let context = describe(delay)
                let clock = ManualClock()
                let pending = Promise<Int>()
                let delayed = Future(value: 1, after: delay, clock: clock)
                let limited = pending.future.timeout(after: delay, clock: clock, on: .synchronous)
                let bounded = Future<Int>.withTimeout(delay, clock: clock, on: .synchronous) { _ in pending.future }
                let retried = Future<Int>.retry(
                    maxAttempts: 2,
                    backoff: .constant(delay),
                    clock: clock,
                    on: .synchronous
                ) { _ in Future(error: FutureError.noSuchElement) }
                let waiting = Task { try await pending.future.value(timeout: delay, clock: clock) }
                let request = CancellationRequest()
                request.cancel(after: delay, clock: clock)
                if delay > .zero { await clock.waitForPendingTimers(6) }  // else none is armed
                if delay >= .seconds(1), delay <= .seconds(Int64.max) {
                    clock.advance(by: delay - .nanoseconds(1))
                    require(!delayed.isCompleted && !limited.isCompleted && !bounded.isCompleted, "\(context): early")
                    require(!retried.isCompleted && !request.isCancellationRequested, "\(context): early")
                    clock.advance(by: .nanoseconds(1))
                } else {
                    clock.advance(by: delay)
                }
                require(delayed.result?.successValue == 1, "\(context): Future(value:after:) \(delayed)")
                require(limited.result?.futureError == .timeout, "\(context): timeout(after:) \(limited)")
                require(bounded.result?.futureError == .timeout, "\(context): withTimeout \(bounded)")
                require(retried.result?.futureError == .noSuchElement, "\(context): retry \(retried)")
                require(request.isCancellationRequested, "\(context): cancel(after:clock:)")
                let waited = await waiting.result
                require(waited.futureError == .timeout, "\(context): value(timeout:clock:) \(waited)")
                withExtendedLifetime(pending) {}
                clock.advance(by: delay)
                let expected =
                    delay > .seconds(Int64.max) ? .seconds(Int64.max) : min(max(delay, .zero) * 2, .seconds(Int64.max))
                require(clock.now == expected, "\(context): now \(describe(clock.now))")
            }
        }
        expectSuccess(result)
    }

    /// On the system clock: a positive timeout never ends a wait before the work it waits for (a
    /// "never" deadline is a long one, not a past one), and a negative one ends it at once.
    @Test func `blocking and async waits and system clock timers take any duration`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            stopIfStuck()
            var arbitrary = Arbitrary(seed: 14)
            for delay in arbitrary.durations(PropertyCases.count / 4) {
                let context = describe(delay)
                let stop = CancellationRequest()
                let delayed = Future(value: 1, after: delay, cancellationToken: stop.token)
                let pending = Promise<Int>()
                let limited = pending.future.timeout(after: delay, cancellationToken: stop.token)
                let bounded = Future<Int>.withTimeout(delay, cancellationToken: stop.token) { _ in pending.future }
                let retried = Future<Int>.retry(
                    maxAttempts: 2,
                    backoff: .constant(delay),
                    cancellationToken: stop.token
                ) { _ in
                    Future(error: FutureError.noSuchElement)
                }
                if delay >= .seconds(3600) {
                    require(!delayed.isCompleted && !limited.isCompleted && !bounded.isCompleted, "\(context): early")
                }
                stop.cancel()
                require(retried.isCompleted, "\(context): retry still pending")
                withExtendedLifetime(pending) {}

                Self.blockingWaits(for: delay)
                if delay <= .zero {
                    let never = Promise<Int>()
                    let waited = await never.future.wait(timeout: delay)
                    withExtendedLifetime(never) {}
                    require(!waited, "\(context): async wait(timeout:)")
                } else if delay >= .seconds(10) {
                    let soon = Future(value: 4, after: .milliseconds(1))
                    let awaited = try? await soon.value(timeout: delay)
                    require(awaited == 4, "\(context): async value(timeout:) \(String(describing: awaited))")
                }
            }
        }
        expectSuccess(result)
    }

    /// Part of the test above: synchronous, since it blocks (an exit test's body is async).
    private static func blockingWaits(for delay: Duration) {
        let context = describe(delay)
        let never = Promise<Int>()
        if delay <= .zero {
            require(!never.future.wait(timeout: delay), "\(context): wait(timeout:)")
            let thrown = Result { try never.future.value(timeout: delay) }
            require(thrown.futureError == .timeout, "\(context): value(timeout:) \(thrown)")
        } else if delay >= .seconds(10) {
            let soon = Future(value: 2, after: .milliseconds(1))
            require(soon.wait(timeout: delay), "\(context): wait(timeout:) timed out early")
            let later = Future(value: 3, after: .milliseconds(1))
            let value = Result { try later.value(timeout: delay) }
            require(value.successValue == 3, "\(context): value(timeout:) \(value)")
        }
        withExtendedLifetime(never) {}
    }

    // MARK: - Counts and capacities

    @Test func `retry numbers, caps and capacities at their extremes work`() async throws {
        let attempts = Counter()
        let retried = Future<Int>.retry(maxAttempts: .max, on: .synchronous) { _ in
            attempts.increment() < 3 ? Future(error: TestFailure()) : Future(value: 7)
        }
        #expect(retried.result?.successValue == 7)

        let unlimited = LimitedExecutionContext(maxConcurrency: .max)
        let jobs = (0..<64).map { index in Future(on: unlimited) { index } }
        #expect(try await jobs.sequence().value() == Array(0..<64))
        unlimited.maxConcurrency = 1
        unlimited.maxConcurrency = .max
        #expect(try await Future(on: unlimited) { 1 }.value() == 1)

        for cap in [1, 2, .max] {
            let values = try await Array(0..<100).traverse(maxConcurrency: cap) { Future(value: $0) }.value()
            #expect(values == Array(0..<100))
        }

        for capacity in [0, 1, .max] {
            let promise = StreamPromise<Int>(capacity: capacity)
            for value in 0..<10 { promise.fulfill(value) }
            promise.finish()
            var kept: [Int] = []
            for try await value in promise.stream.values { kept.append(value) }  // a late subscriber
            #expect(kept == Array(Array(0..<10).suffix(min(capacity, 10))))
        }
    }
}
