import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// A fake operation for `retry`: fails its first `failures` attempts with `TestFailure(code:
/// attempt)`, then succeeds with the attempt number, and logs what happened in order.
final class FlakyOperation: Sendable {
    let failures: Int
    let attempts = Counter()
    let log = Locked<[String]>([])
    /// The tokens the attempts got.
    let tokens = Locked<[CancellationToken]>([])
    /// When set, attempts never complete by themselves (they complete when their token fires).
    let hangs: Bool

    init(failures: Int, hangs: Bool = false) {
        self.failures = failures
        self.hangs = hangs
    }

    func callAsFunction(_ token: CancellationToken) -> Future<Int> {
        let attempt = attempts.increment()
        log.withLock { $0.append("attempt \(attempt)") }
        tokens.withLock { $0.append(token) }
        if hangs {
            let promise = Promise<Int>()
            token.onCancel { promise.reject(CancellationError()) }
            return promise.future
        }
        return attempt <= failures ? Future(error: TestFailure(code: attempt)) : Future(value: attempt)
    }
}

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureRetryTests {
    @Test func `retry runs the operation until it succeeds, at most maxAttempts times`() async throws {
        let flaky = FlakyOperation(failures: 2)
        #expect(try await Future.retry(maxAttempts: 5) { flaky($0) }.value() == 3)
        #expect(flaky.attempts.value == 3)

        let hopeless = FlakyOperation(failures: 10)
        let result = await settled(Future.retry(maxAttempts: 4, backoff: .constant(.milliseconds(1))) { hopeless($0) })
        #expect(result.testFailure == TestFailure(code: 4))  // the last attempt's error
        #expect(hopeless.attempts.value == 4)
    }

    @Test func `retry stops at an error that shouldRetry rejects, and never retries a CancellationError by default`()
        async
    {
        let flaky = FlakyOperation(failures: 3)
        let result = await settled(
            Future.retry(maxAttempts: 5, shouldRetry: { ($0 as? TestFailure)?.code != 2 }) { flaky($0) }
        )
        #expect(result.testFailure == TestFailure(code: 2))
        #expect(flaky.attempts.value == 2)

        let attempts = Counter()
        let cancelled = Future<Int>.retry(maxAttempts: 5) { _ in
            attempts.increment()
            return Future(error: CancellationError())
        }
        #expect(await settled(cancelled).isCancellation)
        #expect(attempts.value == 1)
    }

    @Test
    func `retry waits the backoff's delay between attempts: on a manual clock, each attempt at its exact instant`() {
        let clock = ManualClock()
        let startedAt = Locked<[Duration]>([])
        let flaky = FlakyOperation(failures: 4)
        // Exponential 1 s, 2 s, 4 s, 8 s (capped at 8), each halved by the jitter (r = 0.5, fraction 1).
        let backoff = Backoff.exponential(initial: .seconds(1), maximum: .seconds(8)).jittered(random: { 0.5 })
        let retried = Future<Int>.retry(maxAttempts: 5, backoff: backoff, clock: clock, on: .synchronous) { token in
            startedAt.withLock { $0.append(clock.now) }
            return flaky(token)
        }
        #expect(startedAt.value == [.zero])  // the first attempt at once
        clock.advance(by: .milliseconds(499))
        #expect(startedAt.value == [.zero])  // not an instant before the delay
        clock.advance(by: .milliseconds(1))
        #expect(startedAt.value == [.zero, .milliseconds(500)])
        clock.advance(by: .seconds(60))  // the rest in one call: each delay counts from its failure
        #expect(
            startedAt.value == [
                .zero, .milliseconds(500), .milliseconds(1500), .milliseconds(3500), .milliseconds(7500),
            ]
        )
        #expect(retried.result.flatMap { try? $0.get() } == 5)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `retry with a constant backoff on a manual clock starts no attempt before each delay passes`() {
        let clock = ManualClock()
        let flaky = FlakyOperation(failures: 2)
        let retried = Future<Int>.retry(
            maxAttempts: 3,
            backoff: .constant(.seconds(10)),
            clock: clock,
            on: .synchronous
        ) {
            flaky($0)
        }
        #expect(flaky.attempts.value == 1)
        clock.advance(by: .seconds(9))
        #expect(flaky.attempts.value == 1)
        clock.advance(by: .seconds(1))
        #expect(flaky.attempts.value == 2)
        clock.advance(by: .seconds(10))
        #expect(flaky.log.value == ["attempt 1", "attempt 2", "attempt 3"])
        #expect(retried.result.flatMap { try? $0.get() } == 3)
    }

    @Test func `Backoff: a huge multiplier or many retries reach the maximum instead of overflowing`() {
        let huge = Backoff.exponential(initial: .seconds(1), multiplier: 1e300, maximum: .seconds(60))
        #expect(huge.delay(beforeRetry: 2) == .seconds(60))
        let infinite = Backoff.exponential(initial: .seconds(1), multiplier: .infinity, maximum: .seconds(60))
        #expect(infinite.delay(beforeRetry: 3) == .seconds(60))
        let doubling = Backoff.exponential(initial: .seconds(1), maximum: .seconds(Int64.max / 2))
        #expect(doubling.delay(beforeRetry: 10_000) == .seconds(Int64.max / 2))
    }

    @Test func `Backoff: constant, exponential with a cap, and jitter from an injected random source`() {
        #expect(Backoff.constant(.seconds(2)).delay(beforeRetry: 7) == .seconds(2))
        let exponential = Backoff.exponential(initial: .milliseconds(100), maximum: .milliseconds(500))
        #expect(
            (1...5).map { exponential.delay(beforeRetry: $0) } == [100, 200, 400, 500, 500].map { .milliseconds($0) }
        )
        let tripled = Backoff.exponential(initial: .seconds(1), multiplier: 3, maximum: .seconds(100))
        #expect(tripled.delay(beforeRetry: 3) == .seconds(9))
        #expect(Backoff.constant(.seconds(1)).jittered(random: { 0.25 }).delay(beforeRetry: 1) == .milliseconds(750))
        #expect(
            Backoff.constant(.seconds(1)).jittered(by: 0.5, random: { 0.5 }).delay(beforeRetry: 1) == .milliseconds(750)
        )
        #expect(Backoff.constant(.seconds(-1)).delay(beforeRetry: 1) == .zero)
        #expect(Backoff.immediate.delay(beforeRetry: 3) == .zero)
    }

    @Test func `cancelling during the delay fails the retry at once, starts no further attempt and releases the timer`()
    {
        let clock = ManualClock()
        let flaky = FlakyOperation(failures: 10)
        let request = CancellationRequest()
        let counter = DeinitCounter()
        let retried = { [tracked = counter.make()] in
            Future.retry(
                maxAttempts: 3,
                backoff: .constant(.seconds(3600)),
                clock: clock,
                on: .synchronous,
                cancellationToken: request.token
            ) { token in
                tracked.touch()
                return flaky(token)
            }
        }()
        #expect(flaky.attempts.value == 1)
        #expect(clock.pendingTimerCount == 1)  // the hour-long delay
        #expect(!retried.isCompleted)
        request.cancel()
        #expect(isCancellation(retried.result))  // at once, not after the hour
        #expect(clock.pendingTimerCount == 0)  // the delay's timer is stopped and released
        #expect(counter.deallocated == 1)  // and with it the retry, the operation and what it captured
        clock.advance(by: .seconds(7200))
        #expect(flaky.attempts.value == 1)
    }

    @Test func `cancelling during an attempt cancels that attempt's token and fails the retry at once`() async {
        let flaky = FlakyOperation(failures: 0, hangs: true)
        let request = CancellationRequest()
        let retried = Future.retry(maxAttempts: 3, cancellationToken: request.token) { flaky($0) }
        #expect(await eventually { flaky.attempts.value == 1 })
        let token = flaky.tokens.value[0]
        #expect(!token.isCancellationRequested)
        request.cancel()
        #expect(isCancellation(retried.result))
        #expect(token.isCancellationRequested)
        #expect(flaky.attempts.value == 1)
    }

    @Test func `each attempt gets a token of its own, and a cancelled token starts no attempt`() async throws {
        let flaky = FlakyOperation(failures: 2)
        _ = try await Future.retry(maxAttempts: 3) { flaky($0) }.value()
        #expect(Set(flaky.tokens.value).count == 3)

        let never = FlakyOperation(failures: 0)
        let retried = Future.retry(maxAttempts: 3, cancellationToken: .cancelled) { never($0) }
        #expect(isCancellation(retried.result))
        #expect(never.attempts.value == 0)
    }
}

extension FutureRetryTests {
    /// `on: .mainActor`: every attempt on the main actor.
    @Suite struct OnMainActor {
        @Test func `retry on .mainActor calls every attempt on the main actor`() async throws {
            let attempts = Attempts()
            let result = Future<Int>.retry(maxAttempts: 3, on: .mainActor) { _ in
                MainActor.assertIsolated()
                attempts.count += 1
                return attempts.count < 3 ? Future(error: TestFailure()) : Future(value: attempts.count)
            }
            #expect(try await result.value() == 3)
            #expect(await attempts.count == 3)
        }
    }
}
