import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureTimeoutTests {
    @Test("timeout(after:) fails with FutureError.timeout when the source is still pending; the source is untouched")
    func timeoutFires() async throws {
        let source = Promise<Int>()
        let limited = source.future.timeout(after: .milliseconds(20))
        await #expect(throws: FutureError.timeout) { try await limited.value() }
        #expect(!source.future.isCompleted)
        source.fulfill(1)
        #expect(try await source.future.value() == 1)
    }

    @Test("timeout(after:) on a manual clock: pending an instant before the deadline, timed out at it")
    func timeoutOnManualClock() {
        let clock = ManualClock()
        let source = Promise<Int>()
        let limited = source.future.timeout(after: .seconds(5), clock: clock, on: .synchronous)
        clock.advance(by: .seconds(5) - .nanoseconds(1))
        #expect(!limited.isCompleted)
        clock.advance(by: .nanoseconds(1))
        #expect(limited.result.map(isTimeout) == true)  // inside advance(by:)
        #expect(!source.future.isCompleted)  // the source is untouched
        #expect(clock.pendingTimerCount == 0)
    }

    @Test("timeout(after:) on a manual clock: a result before the deadline wins and stops the timer at once")
    func timeoutResultFirstOnManualClock() {
        let clock = ManualClock()
        let source = Promise<Int>()
        let limited = source.future.timeout(after: .seconds(5), clock: clock, on: .synchronous)
        clock.advance(by: .seconds(4))
        source.fulfill(7)
        #expect(limited.result.flatMap { try? $0.get() } == 7)
        #expect(clock.pendingTimerCount == 0)
        clock.advance(by: .seconds(10))
        #expect(limited.result.flatMap { try? $0.get() } == 7)
    }

    @Test("timeout(after:) passes the source's result on when it completes in time")
    func timeoutPassesResult() async throws {
        #expect(try await Future(value: 3).timeout(after: .seconds(30)).value() == 3)
        let source = Promise<Int>()
        let limited = source.future.timeout(after: HangLimit.timeout(.seconds(30)))
        source.reject(SampleError())
        await #expect(throws: SampleError()) { try await limited.value() }
    }

    @Test("timeout(after:) with a cancelled token fails with CancellationError")
    func timeoutCancelled() async {
        let source = Promise<Int>()
        let request = CancellationRequest()
        let limited = source.future.timeout(after: .seconds(30), cancellationToken: request.token)
        request.cancel()
        #expect(isCancellation(limited.result))
        withExtendedLifetime(source) {}
    }

    @Test("Future(value:after:) succeeds with the value after the delay")
    func delayedValue() async throws {
        let delayed = Future(value: "later", after: .milliseconds(10))
        #expect(try await delayed.value() == "later")
        #expect(try await Future(value: 1, after: .seconds(-1)).value() == 1)
    }

    @Test("Future(value:after:) on a manual clock succeeds at the deadline, not an instant before")
    func delayedValueOnManualClock() {
        let clock = ManualClock()
        let delayed = Future(value: "later", after: .seconds(2), clock: clock)
        clock.advance(by: .seconds(2) - .nanoseconds(1))
        #expect(!delayed.isCompleted)
        clock.advance(by: .nanoseconds(1))
        #expect(delayed.result.flatMap { try? $0.get() } == "later")
        #expect(Future(value: 1, after: .seconds(-1), clock: clock).isCompleted)  // negative counts as zero
    }

    @Test("Future(value:after:) on a manual clock: a cancelled token fails it and removes its timer")
    func delayedValueCancelledOnManualClock() {
        let clock = ManualClock()
        let request = CancellationRequest()
        let delayed = Future(value: 1, after: .seconds(60), clock: clock, cancellationToken: request.token)
        #expect(clock.pendingTimerCount == 1)
        request.cancel()
        #expect(isCancellation(delayed.result))
        #expect(clock.pendingTimerCount == 0)
    }

    @Test("Future(value:after:) fails with CancellationError when its token is cancelled first")
    func delayedValueCancelled() async {
        let request = CancellationRequest()
        let delayed = Future(value: 1, after: .seconds(60), cancellationToken: request.token)
        #expect(!delayed.isCompleted)
        request.cancel()
        #expect(isCancellation(delayed.result))
    }
}

func isTimeout<T>(_ result: Result<T, any Error>) -> Bool {
    if case .failure(let error) = result, error as? FutureError == .timeout { return true }
    return false
}

// MARK: - On the main actor

extension FutureTimeoutTests {
    @Test func `timeout accepts .mainActor`() async throws {
        #expect(try await Future(value: 2).timeout(after: HangLimit.timeout(.seconds(60)), on: .mainActor).value() == 2)
    }
}
