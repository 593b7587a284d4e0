import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// `await ManualClock.advanceAndSettle(by:)`: code under test keeps its default `on:` (`.default`), and one
/// call drives it to the end, because the clock waits for FutureLib's contexts to be idle between
/// timers. No test here passes `on: .synchronous` to the code under test.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct ManualClockSettleTests {
    @Test func `withTimeout on the default context: work that answers in time wins`() async {
        let clock = ManualClock()
        let answer = Future<Int>.withTimeout(.seconds(3), clock: clock) { token in
            // Two steps on the clock, the second armed by a continuation on `.default`.
            Future(value: 1, after: .seconds(1), clock: clock, cancellationToken: token)
                .flatMap { Future(value: $0 + 1, after: .seconds(1), clock: clock, cancellationToken: token) }
        }
        await clock.advanceAndSettle(by: .seconds(2))
        #expect(answer.result?.successValue == 2)
        #expect(clock.pendingTimerCount == 0)  // the deadline was stopped
    }

    @Test func `withTimeout on the default context: work too slow times out, its token cancelled`() async {
        let clock = ManualClock()
        let workToken = Locked<CancellationToken?>(nil)
        let answer = Future<Int>.withTimeout(.seconds(3), clock: clock) { token in
            workToken.withLock { $0 = token }
            return Future(value: 1, after: .seconds(30), clock: clock, cancellationToken: token)
        }
        await clock.advanceAndSettle(by: .seconds(3))
        #expect(answer.result?.futureError == .timeout)
        #expect(workToken.value?.isCancellationRequested == true)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `.mainActor deliveries are waited for, chained ones included`() async {
        let clock = ManualClock()
        let seen = Locked<[String]>([])
        let retried = Future<Int>.retry(
            maxAttempts: 3,
            backoff: .constant(.seconds(1)),
            clock: clock,
            on: .mainActor
        ) { _ in
            seen.withLock { $0.append("attempt") }
            return Future(error: TestFailure(code: 2))
        }
        let reported = retried.recover(on: .mainActor) { _ in 7 }.map(on: .mainActor) { $0 * 6 }
        await clock.advanceAndSettle(by: .seconds(2))
        #expect(seen.value == ["attempt", "attempt", "attempt"])
        #expect(reported.result?.successValue == 42)
    }

    @Test func `a timeout delivered on .mainActor, then a continuation on .default`() async {
        let clock = ManualClock()
        let never = Promise<Int>()
        let late = never.future.timeout(after: .seconds(5), clock: clock, on: .mainActor)
        let described = late.recover { ($0 as? FutureError) == .timeout ? -1 : 0 }
        await clock.advanceAndSettle(by: .seconds(5))
        #expect(described.result?.successValue == -1)
        withExtendedLifetime(never) {}
    }

    @Test func `a LimitedExecutionContext on .default is waited for`() async {
        let clock = ManualClock()
        let limited = LimitedExecutionContext(maxConcurrency: 1)
        let starts = Locked<[Duration]>([])
        let retried = Future<Int>.retry(
            maxAttempts: 4,
            backoff: .exponential(initial: .seconds(1), maximum: .seconds(10)),
            clock: clock,
            on: limited
        ) { _ in
            starts.withLock { $0.append(clock.now) }
            return Future(on: limited) { throw TestFailure(code: 3) }
        }
        await clock.advanceAndSettle(by: .seconds(7))
        #expect(starts.value == [.zero, .seconds(1), .seconds(3), .seconds(7)])
        #expect(retried.result?.testFailure == TestFailure(code: 3))
    }

    @Test func `async closures on the pool: each sleep is armed before the clock moves on`() async throws {
        let clock = ManualClock()
        let steps = Future<Int> {
            try await clock.sleep(for: .seconds(1))
            return 1
        }.map { value in
            try await clock.sleep(for: .seconds(1))
            return value + 1
        }
        await clock.advanceAndSettle(by: .seconds(2))
        #expect(steps.result?.successValue == 2)
        #expect(clock.now == .seconds(2))
    }

    @Test func `timers due later than the target stay pending`() async {
        let clock = ManualClock()
        let later = Future(value: 1, after: .seconds(5), clock: clock).map { $0 + 1 }
        await clock.advanceAndSettle(by: .seconds(4))
        #expect(!later.isCompleted)
        #expect(clock.pendingTimerCount == 1)
        await clock.advanceAndSettle(by: .seconds(1))
        #expect(later.result?.successValue == 2)
    }

    @Test func `work on the caller's own queue is not waited for`() async {
        let clock = ManualClock()
        let queue = DispatchQueue(label: "own")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }  // the queue is busy until the test lets it go
        let mapped = Future(value: 1, after: .seconds(1), clock: clock).map(on: queue) { $0 + 1 }
        await clock.advanceAndSettle(by: .seconds(1))  // returns although the queue has not run `map`
        #expect(!mapped.isCompleted)
        gate.signal()
        #expect(await settled(mapped).successValue == 2)
    }

    @Test func `a negative or extreme duration is clamped, never a trap`() async {
        let clock = ManualClock()
        await clock.advanceAndSettle(by: .seconds(-5))
        #expect(clock.now == .zero)
        await clock.advanceAndSettle(by: .seconds(Int64.max))
        await clock.advanceAndSettle(by: .seconds(Int64.max))
        #expect(clock.now >= .seconds(Int64.max))
    }
}

/// Ten thousand retries, each a round trip between the test's task and FutureLib's pool: seconds
/// on a loaded machine, more under the sanitizers, so a time limit of its own.
@Suite(.timeLimit(.minutes(HangLimit.minutes(10))))
struct ManualClockSettleScaleTests {
    @Test func `one await advance drives 10^4 retries with backoff, attempts on .default`() async {
        let clock = ManualClock()
        let attempts = Counter()
        let attemptCount = Scale.tenThousand + 1  // 10^4 retries (10^3 under the sanitizers)
        let retried = Future<Int>.retry(
            maxAttempts: attemptCount,
            backoff: .exponential(initial: .milliseconds(1), maximum: .seconds(1)),
            clock: clock
        ) { _ in
            attempts.increment()
            // One more hop on the pool before the attempt fails.
            return Future(on: .default) { throw TestFailure(code: 1) }
        }
        await clock.advanceAndSettle(by: .seconds(attemptCount))
        #expect(attempts.value == attemptCount)
        #expect(retried.result?.testFailure == TestFailure(code: 1))
        #expect(clock.pendingTimerCount == 0)
    }
}

/// The scenarios above, repeated (`make stress` raises the count): the outcome never depends on
/// which pool thread runs what when.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(3))))
struct ManualClockSettleRaceTests {
    /// Each round hops between the test's task, the pool and the main queue several times: 100
    /// rounds in `make test`, `Stress.heavy` (10^4) in `make stress`.
    static let rounds = Stress.override == nil ? 100 : Stress.heavy

    @Test func `retry and withTimeout on .default settle the same way every time`() async {
        var failures: [String] = []
        for round in 0..<Self.rounds {
            let clock = ManualClock()
            let server = FakeServer(clock: clock, answeringAfter: .seconds(4))
            let config = resilientConfig(clock: clock, fetch: server.fetch)
            await clock.advanceAndSettle(by: .seconds(4))
            if config.result?.successValue != Config(port: 80) || server.startTimes != [.zero] {
                failures.append("round \(round): \(String(describing: config.result)) \(server.startTimes)")
            }
            if failures.count >= 10 { break }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `a chain hopping between the pool and .mainActor settles every time`() async {
        var failures: [String] = []
        for round in 0..<Self.rounds {
            let clock = ManualClock()
            let first: Future<Int> = Future(value: 1, after: .seconds(1), clock: clock).map(on: .mainActor) { $0 + 1 }
            let second: Future<Int> = first.flatMap { Future(value: $0 + 1, after: .seconds(1), clock: clock) }
            let chain: Future<Int> = second.map(on: .mainActor) { $0 + 1 }.map { $0 + 1 }
            await clock.advanceAndSettle(by: .seconds(2))
            if chain.result?.successValue != 5 {
                failures.append("round \(round): \(String(describing: chain.result))")
            }
            if failures.count >= 10 { break }
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
