import FutureLib
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3)))
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

    @Test("timeout(after:) passes the source's result on when it completes in time")
    func timeoutPassesResult() async throws {
        #expect(try await Future(value: 3).timeout(after: .seconds(30)).value() == 3)
        let source = Promise<Int>()
        let limited = source.future.timeout(after: .seconds(30))
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

    @Test("Future(value:after:) fails with CancellationError when its token is cancelled first")
    func delayedValueCancelled() async {
        let request = CancellationRequest()
        let delayed = Future(value: 1, after: .seconds(60), cancellationToken: request.token)
        #expect(!delayed.isCompleted)
        request.cancel()
        #expect(isCancellation(delayed.result))
    }
}
