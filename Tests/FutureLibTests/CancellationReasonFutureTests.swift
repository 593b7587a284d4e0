import Cancellation
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// A token cancelled with a reason still makes futures and streams fail with `CancellationError`:
/// the reason is read from the token.
@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct CancellationReasonFutureTests {
    struct ShuttingDown: Error {}

    @Test func `a future cancelled by a token with a reason fails with CancellationError`() {
        let request = CancellationRequest()
        let pending = Promise<Int>()
        let mapped = pending.future.map(on: .synchronous, cancellationToken: request.token) { $0 + 1 }
        let failures = Locked<[any Error]>([])
        pending.future.onFailure(on: .synchronous, cancellationToken: request.token) { error in
            failures.withLock { $0.append(error) }
        }
        request.cancel(reason: ShuttingDown())
        #expect(throws: CancellationError.self) { try mapped.result?.get() }
        #expect(failures.value.count == 1 && failures.value.first is CancellationError)
        #expect(request.token.cancellationReason is ShuttingDown)
    }

    @Test func `a stream cancelled by a token with a reason fails with CancellationError`() {
        let request = CancellationRequest()
        let source = StreamPromise<Int>()
        let failures = Locked<[any Error]>([])
        source.stream.map(on: .synchronous, cancellationToken: request.token) { $0 }
            .onFailure(on: .synchronous, policy: .allErrors) { error in failures.withLock { $0.append(error) } }
        request.cancel(reason: DeadlineExceededError())
        #expect(failures.value.count == 1 && failures.value.first is CancellationError)
    }
}
