import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// "Inputs that are not valid" (Documentation/Guarantees.md): ordinary misuse is a defined no-op, never a trap, a
/// hang or a second run; a programming error without a meaning stops with a precondition
/// failure that names the argument. Misuse already covered elsewhere (resolving twice,
/// unregistering twice, cancelling twice, handlers that register/unregister/cancel) is listed in
/// `Documentation/Guarantees.md`.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3)))) struct MisuseTests {
    // MARK: - Resolving and cancelling from inside continuations and handlers

    @Test func `a continuation that resolves its own promise again is ignored and runs once`() {
        let promise = Promise<Int>()
        let calls = Counter()
        promise.future.onComplete(on: .synchronous) { _ in
            calls.increment()
            promise.fulfill(2)  // already resolved: ignored, no recursion
            #expect(!promise.tryReject(TestFailure()))
        }
        promise.fulfill(1)
        #expect(calls.value == 1)
        #expect(promise.future.result?.successValue == 1)
    }

    @Test func `a continuation that cancels its own token after it started runs once, with the result`() {
        let promise = Promise<Int>()
        let request = CancellationRequest()
        let outcomes = Locked<[Result<Int, any Error>]>([])
        promise.future.onComplete(on: .synchronous, cancellationToken: request.token) { result in
            outcomes.withLock { $0.append(result) }
            request.cancel()  // too late for this continuation: it is already running
        }
        promise.fulfill(1)
        let seen = outcomes.value
        #expect(seen.count == 1)
        #expect(seen.first?.successValue == 1)
    }

    @Test
    func `a cancellation handler that cancels the token's own future continuation runs it once with CancellationError`()
    {
        let promise = Promise<Int>()
        let request = CancellationRequest()
        let outcomes = Locked<[Result<Int, any Error>]>([])
        // Registered first, so it runs last (LIFO): the continuation is already cancelled then.
        request.token.onCancel { request.cancel() }
        promise.future.onComplete(on: .synchronous, cancellationToken: request.token) { result in
            outcomes.withLock { $0.append(result) }
        }
        request.cancel()
        promise.fulfill(1)
        #expect(outcomes.value.count == 1)
        #expect(outcomes.value.first?.isCancellation == true)
    }

    @Test
    func
        `a cancellation handler that registers a continuation with the cancelled token gets CancellationError at once`()
    {
        let promise = Promise<Int>()
        promise.fulfill(1)  // even over a result that already exists
        let request = CancellationRequest()
        let outcomes = Locked<[Result<Int, any Error>]>([])
        request.token.onCancel {
            promise.future.onComplete(on: .synchronous, cancellationToken: request.token) { result in
                outcomes.withLock { $0.append(result) }
            }
        }
        request.cancel()
        #expect(outcomes.value.count == 1)
        #expect(outcomes.value.first?.isCancellation == true)
    }

    @Test func `resolve(with:) of the promise's own future is ignored: the dropped promise still breaks`() async {
        var promise: Promise<Int>? = Promise<Int>()
        let future = promise!.future
        promise!.resolve(with: future)  // would be a cycle: the future holding the promise that completes it
        #expect(!future.isCompleted)
        promise = nil
        #expect(future.result?.futureError == .brokenPromise)
    }

    // MARK: - Negative delays count as zero

    @Test func `timeout(after:) with a negative delay times a pending future out at once`() async {
        let promise = Promise<Int>()
        let limited = promise.future.timeout(after: .seconds(-1))
        #expect(await settled(limited).futureError == .timeout)
        withExtendedLifetime(promise) {}
    }

    @Test func `a delayed future with a negative delay completes at once`() async {
        #expect(await settled(Future(value: 7, after: .seconds(-1))).successValue == 7)
    }

    // MARK: - Blocking API in async code

    /// `value()` without `await` in an async function does not compile: the blocking overloads
    /// are `@available(*, noasync)` ("value() blocks the thread; use 'try await future.value()' in
    /// async code"). Written with `await`, the call is the async overload; the proof it is not the
    /// blocking one: cancelling the task ends the wait (a blocked thread would not notice), and
    /// writing `await` on the blocking overload would be a warning, an error under
    /// `-warnings-as-errors`.
    @Test func `value() in an async function is the async overload: task cancellation ends it`() async {
        let promise = Promise<Int>()
        let waiter = Task { try await promise.future.value() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        withExtendedLifetime(promise) {}
    }

    // MARK: - Programming errors stop with a message that names the argument

    /// Expects the stopped process's standard error to name `argument`. Only a debug build prints a
    /// precondition's message: an optimized one (`make test-release`) stops without it, as Swift's
    /// `precondition` does in `-O`.
    private func expectMessage(_ result: ExitTest.Result?, naming argument: String) {
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains(argument), "the message does not name \(argument): \(message)")
        #endif
    }

    @Test func `traverse with maxConcurrency below 1 stops with a precondition failure`() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = [1].traverse(maxConcurrency: 0) { Future(value: $0) }
        }
        expectMessage(result, naming: "maxConcurrency")
    }

    @Test func `LimitedExecutionContext with maxConcurrency below 1 stops with a precondition failure`() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = LimitedExecutionContext(maxConcurrency: 0)
        }
        expectMessage(result, naming: "maxConcurrency")
        let lowered = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            LimitedExecutionContext(maxConcurrency: 1).maxConcurrency = 0
        }
        expectMessage(lowered, naming: "maxConcurrency")
    }

    @Test func `retry with maxAttempts below 1 stops with a precondition failure`() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Future<Int>.retry(maxAttempts: 0) { _ in Future(value: 1) }
        }
        expectMessage(result, naming: "maxAttempts")
    }

    @Test func `chunks of a count below 1 stops with a precondition failure`() async {
        let zero = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = StreamPromise<Int>().stream.chunks(ofCount: 0)
        }
        expectMessage(zero, naming: "count")
        let negative = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = StreamPromise<Int>().stream.chunks(ofCount: -1, or: .seconds(1), clock: ManualClock())
        }
        expectMessage(negative, naming: "count")
    }

    @Test func `a negative stream capacity stops with a precondition failure`() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = StreamPromise<Int>(capacity: -1)
        }
        expectMessage(result, naming: "capacity")
    }
}
