import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// `policy:` on `recover`, `recoverWith`, `mapError` and `onFailure`: a source that failed with
/// `CancellationError` passes it on by default and is handled with `.allErrors`; the handler's own
/// token keeps its meaning whatever the policy.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct ErrorPolicyTests {
    static let policies: [ErrorPolicy] = [.allErrorsExceptCancellation, .allErrors]

    /// A source that was cancelled by its work's token.
    private func cancelledSource() -> Future<Int> {
        let request = CancellationRequest()
        let source = Future(value: 1, after: .seconds(60), cancellationToken: request.token)
        request.cancel()
        return source
    }

    @Test(arguments: policies)
    func `recover and recoverWith of a cancelled source: passed on by default, recovered with allErrors`(
        policy: ErrorPolicy
    ) async {
        let calls = CallFlag()
        let recovered = cancelledSource().recover(policy: policy) { _ in
            calls.set()
            return 7
        }
        let recoveredWith = cancelledSource().recoverWith(policy: policy) { _ in
            calls.set()
            return Future(value: 7)
        }
        for future in [recovered, recoveredWith] {
            let outcome = await awaitOutcome(future)
            if policy == .allErrors {
                #expect((try? outcome.get()) == 7)
            } else {
                #expect(isCancellation(outcome))
            }
        }
        #expect(calls.count == (policy == .allErrors ? 2 : 0))
    }

    @Test(arguments: policies)
    func `mapError of a cancelled source: passed on unchanged by default, mapped with allErrors`(
        policy: ErrorPolicy
    ) async {
        let mapped = cancelledSource().mapError(policy: policy) { _ in SampleError(code: 5) }
        let outcome = await awaitOutcome(mapped)
        if policy == .allErrors {
            #expect(throws: SampleError(code: 5)) { try outcome.get() }
        } else {
            #expect(isCancellation(outcome))
        }
    }

    @Test(arguments: policies)
    func `onFailure of a cancelled source: not called by default, called with allErrors`(policy: ErrorPolicy) async {
        let calls = CallFlag()
        let source = cancelledSource()
        source.onFailure(on: .synchronous, policy: policy) { error in
            if error is CancellationError { calls.set() }
        }
        _ = await awaitOutcome(source)
        #expect(calls.count == (policy == .allErrors ? 1 : 0))
    }

    @Test(arguments: policies)
    func `other errors reach every handler whatever the policy`(policy: ErrorPolicy) async throws {
        let failed = Future<Int>(error: SampleError(code: 2))
        #expect(try await failed.recover(policy: policy) { _ in 3 }.value() == 3)
        #expect(try await failed.recoverWith(policy: policy) { _ in Future(value: 3) }.value() == 3)
        await #expect(throws: SampleError(code: 4)) {
            try await failed.mapError(policy: policy) { _ in SampleError(code: 4) }.value()
        }
        let calls = CallFlag()
        failed.onFailure(on: .synchronous, policy: policy) { _ in calls.set() }
        #expect(calls.count == 1)
    }

    @Test(arguments: policies)
    func `the handler's own token: onFailure is called once with CancellationError, combinators skip their closure`(
        policy: ErrorPolicy
    ) async {
        let request = CancellationRequest()
        let pending = Promise<Int>()
        let calls = CallFlag()
        pending.future.onFailure(on: .synchronous, cancellationToken: request.token, policy: policy) { error in
            if error is CancellationError { calls.set() }
        }
        let recovered = pending.future.recover(cancellationToken: request.token, policy: policy) { _ in
            calls.set()
            return 0
        }
        request.cancel()
        #expect(calls.count == 1)  // onFailure, once; never recover's closure
        #expect(isCancellation(recovered.result))
        pending.fulfill(1)
        #expect(calls.count == 1)
    }

    @Test(arguments: policies)
    func `the async and main-actor forms take the policy too`(policy: ErrorPolicy) async {
        let calls = CallFlag()
        let asyncRecovered = cancelledSource().recover(policy: policy) { _ in
            await Task.yield()
            calls.set()
            return 7
        }
        let mainRecovered = cancelledSource().recover(on: .mainActor, policy: policy) { _ in
            calls.set()
            return 7
        }
        let mainMapped = cancelledSource().mapError(on: .mainActor, policy: policy) { _ in SampleError(code: 6) }
        for future in [asyncRecovered, mainRecovered, mainMapped] {
            let outcome = await awaitOutcome(future)
            #expect(isCancellation(outcome) == (policy == .allErrorsExceptCancellation))
        }
        #expect(calls.count == (policy == .allErrors ? 2 : 0))
    }
}
