import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureWithTimeoutTests {
    @Test func `withTimeout cancels the work's token at the deadline and fails with FutureError.timeout at once`() async
    {
        let handed = Locked<CancellationToken?>(nil)
        let pending = Promise<Int>()
        let counter = DeinitCounter()
        let limited = { [tracked = counter.make()] in
            // `.synchronous`: the operation runs at once, so the deadline finds its token handed out.
            Future<Int>.withTimeout(.milliseconds(20), on: .synchronous) { token in
                tracked.touch()
                handed.withLock { $0 = token }
                return pending.future  // ignores its token: never completes by itself
            }
        }()
        await #expect(throws: FutureError.timeout) { try await limited.value() }
        // The work runs on `.default`: on a loaded machine it may start only after the deadline.
        #expect(await eventually { handed.value?.isCancellationRequested == true })
        #expect(await eventually { counter.deallocated == 1 })  // the operation was released
        withExtendedLifetime(pending) {}
    }

    @Test func `withTimeout fails with FutureError.timeout when the work honours its token`() async {
        let handed = Locked<CancellationToken?>(nil)
        // The work fails with CancellationError as soon as the deadline cancels its token: the
        // timeout still wins. The work runs on `.default`, and work that has not started by the
        // deadline is never started at all; so the deadline is on a manual clock and passes only
        // once the work has started (on a real clock, under ThreadSanitizer's load, the pool could
        // start it after the deadline, and then nothing was ever handed out).
        let clock = ManualClock()
        let limited = Future<Int>.withTimeout(.milliseconds(20), clock: clock) { token in
            handed.withLock { $0 = token }
            return Future(value: 1, after: .seconds(3600), cancellationToken: token)
        }
        #expect(await eventually { handed.value != nil })
        await clock.advanceAndSettle(by: .milliseconds(20))
        await #expect(throws: FutureError.timeout) { try await limited.value() }
        #expect(handed.value?.isCancellationRequested == true)

        // Work that was started with `.synchronous`, and work that fails at once on its token.
        let synchronous = Future<Int>.withTimeout(.milliseconds(20), on: .synchronous) { token in
            Future(value: 1, after: .seconds(3600), cancellationToken: token)
        }
        await #expect(throws: FutureError.timeout) { try await synchronous.value() }
        let promptly = Future<Int>.withTimeout(.milliseconds(20)) { token in
            let promise = Promise<Int>()
            token.onCancel { promise.reject(CancellationError()) }
            return promise.future
        }
        await #expect(throws: FutureError.timeout) { try await promptly.value() }
    }

    @Test(arguments: [Duration.zero, .seconds(-1)])
    func `withTimeout with a delay of zero or less times out at once, whatever the work does with its token`(
        delay: Duration
    ) async {
        let honouring = Future<Int>.withTimeout(delay, on: .synchronous) { token in
            Future(value: 1, after: .seconds(3600), cancellationToken: token)
        }
        #expect(honouring.result.map(isTimeout) == true)
        let ignoring = Future<Int>.withTimeout(delay, on: .synchronous) { _ in Promise<Int>().future }
        #expect(ignoring.result.map(isTimeout) == true)
    }

    @Test func `withTimeout passes the work's result on, stops the timer and never cancels the work's token`()
        async throws
    {
        let handed = Locked<CancellationToken?>(nil)
        let limited = Future.withTimeout(.seconds(3600)) { token in
            handed.withLock { $0 = token }
            return Future(value: 7)
        }
        #expect(try await limited.value() == 7)
        #expect(handed.value?.isCancellationRequested == false)

        let failing = Future<Int>.withTimeout(.seconds(3600)) { _ in Future(error: SampleError()) }
        await #expect(throws: SampleError()) { try await failing.value() }
    }

    @Test func `withTimeout: the caller's token cancels the work and fails it with CancellationError`() async {
        let request = CancellationRequest()
        let handed = Locked<CancellationToken?>(nil)
        let started = Signal()
        let limited = Future<Int>.withTimeout(.seconds(3600), cancellationToken: request.token) { token in
            handed.withLock { $0 = token }
            started.fire()
            return Future(value: 0, after: .seconds(3600), cancellationToken: token)
        }
        await onDedicatedThread { started.wait() }
        request.cancel()
        #expect(isCancellation(limited.result))
        #expect(handed.value?.isCancellationRequested == true)
        #expect(
            isCancellation(
                Future<Int>.withTimeout(.seconds(1), cancellationToken: .cancelled) { _ in
                    Future(value: 1)
                }.result
            )
        )
    }

    @Test func `timeout(after:) only stops waiting: the work goes on and its token is never cancelled`() async throws {
        let request = CancellationRequest()
        let source = Promise<Int>()
        let limited = source.future.timeout(after: .milliseconds(10))
        await #expect(throws: FutureError.timeout) { try await limited.value() }
        #expect(!request.isCancellationRequested)
        source.fulfill(1)
        #expect(try await source.future.value() == 1)
    }

    // MARK: - On a manual clock: timeout vs withTimeout, work that honours or ignores its token

    /// Work that finishes 30 s after it starts on `clock`, failing with CancellationError at once
    /// if `token` is cancelled first (it honours its token).
    private static func honouring(_ clock: ManualClock, _ token: CancellationToken) -> Future<Int> {
        Future(value: 1, after: .seconds(30), clock: clock, cancellationToken: token)
    }

    /// Work that finishes 30 s after it starts on `clock`, whatever happens to its token.
    private static func ignoring(_ clock: ManualClock, _ token: CancellationToken) -> Future<Int> {
        Future(value: 1, after: .seconds(30), clock: clock)
    }

    @Test(arguments: [true, false])
    func `withTimeout on a manual clock: the deadline fails it with timeout and cancels the work's token`(
        honours: Bool
    ) {
        let clock = ManualClock()
        let handed = Locked<CancellationToken?>(nil)
        let work = Locked<Future<Int>?>(nil)
        let limited = Future<Int>.withTimeout(.seconds(3), clock: clock, on: .synchronous) { token in
            handed.withLock { $0 = token }
            let started = honours ? Self.honouring(clock, token) : Self.ignoring(clock, token)
            work.withLock { $0 = started }
            return started
        }
        clock.advance(by: .seconds(3) - .nanoseconds(1))
        #expect(!limited.isCompleted)
        #expect(handed.value?.isCancellationRequested == false)
        clock.advance(by: .nanoseconds(1))
        #expect(limited.result.map(isTimeout) == true)
        #expect(handed.value?.isCancellationRequested == true)
        // The work stopped if it honours its token; otherwise it goes on, and its late result is dropped.
        #expect(work.value?.isCompleted == honours)
        clock.advance(by: .seconds(30))
        #expect(work.value?.isCompleted == true)
        #expect(limited.result.map(isTimeout) == true)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test(arguments: [true, false])
    func `timeout(after:) on a manual clock only stops waiting: the work's token is never cancelled`(
        honours: Bool
    ) {
        let clock = ManualClock()
        let request = CancellationRequest()  // the work's own token, which timeout(after:) never touches
        let work = honours ? Self.honouring(clock, request.token) : Self.ignoring(clock, request.token)
        let limited = work.timeout(after: .seconds(3), clock: clock, on: .synchronous)
        clock.advance(by: .seconds(3))
        #expect(limited.result.map(isTimeout) == true)
        #expect(!request.isCancellationRequested)
        #expect(!work.isCompleted)  // it goes on...
        clock.advance(by: .seconds(27))
        #expect(work.result.flatMap { try? $0.get() } == 1)  // ...and completes at its own time
    }

    @Test
    func `withTimeout on a manual clock: work that finishes before the deadline wins, and its token stays uncancelled`()
    {
        let clock = ManualClock()
        let handed = Locked<CancellationToken?>(nil)
        let limited = Future<Int>.withTimeout(.seconds(60), clock: clock, on: .synchronous) { token in
            handed.withLock { $0 = token }
            return Self.honouring(clock, token)
        }
        clock.advance(by: .seconds(30))
        #expect(limited.result.flatMap { try? $0.get() } == 1)
        #expect(handed.value?.isCancellationRequested == false)
        #expect(clock.pendingTimerCount == 0)  // the deadline's timer was stopped
    }
}

extension FutureWithTimeoutTests {
    /// `on: .mainActor`: the operation starts on the main actor.
    @Suite struct OnMainActor {
        @Test func `withTimeout on .mainActor starts its operation there and times out on its clock`() async throws {
            let clock = ManualClock()
            let attempts = Attempts()
            let handed = Locked<CancellationToken?>(nil)
            let never = Promise<Int>()  // kept: the work never completes
            let limited = Future<Int>.withTimeout(.seconds(5), clock: clock, on: .mainActor) { token in
                MainActor.assertIsolated()
                attempts.count += 1
                handed.withLock { $0 = token }
                return never.future
            }
            #expect(await eventually { handed.value != nil })  // the operation ran, on the main actor
            await clock.advanceAndSettle(by: .seconds(4))
            #expect(!limited.isCompleted)
            await clock.advanceAndSettle(by: .seconds(1))
            await #expect(throws: FutureError.timeout) { try await limited.value() }
            #expect(handed.value?.isCancellationRequested == true)
            #expect(await attempts.count == 1)
        }
    }
}
