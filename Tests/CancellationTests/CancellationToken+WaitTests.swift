import Cancellation
import TestSupport
import Testing

/// `wait(timeout:)` blocks, so every call runs on a dedicated thread (see `onDedicatedThread`).
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationTokenWaitTests {
    // MARK: - wait(timeout:)

    @Test func `wait(timeout:) returns true at once for a token that is already cancelled`() async {
        let request = CancellationRequest()
        request.cancel()
        #expect(await onDedicatedThread { request.token.wait(timeout: HangLimit.timeout(.seconds(10))) })
        #expect(await onDedicatedThread { CancellationToken.cancelled.wait(timeout: .zero) })
    }

    @Test func `wait(timeout:) returns true when the request is cancelled while it waits`() async {
        let request = CancellationRequest()
        let waiting = Signal()
        async let cancelled = onDedicatedThread { () -> Bool in
            waiting.fire()
            return request.token.wait(timeout: HangLimit.timeout(.seconds(10)))
        }
        await onDedicatedThread {
            waiting.wait()
            pause(.milliseconds(20))  // likely inside the wait by now; either way the result must be true
            request.cancel()
        }
        #expect(await cancelled)
    }

    @Test func `wait(timeout:) returns false when the timeout passes first`() async {
        let request = CancellationRequest()
        #expect(!(await onDedicatedThread { request.token.wait(timeout: .milliseconds(20)) }))
        #expect(!request.isCancellationRequested)
    }

    @Test func `wait(timeout:) leaves no handler behind`() async {
        let request = CancellationRequest()
        let runs = Counter()
        request.token.onCancel { runs.increment() }
        #expect(!(await onDedicatedThread { request.token.wait(timeout: .milliseconds(10)) }))
        request.cancel()
        #expect(runs.value == 1)
        #expect(await onDedicatedThread { request.token.wait(timeout: .zero) })
    }

    @Test(arguments: [Duration.zero, .seconds(-1)])
    func `wait(timeout:) with a timeout of zero or less returns at once`(timeout: Duration) async {
        let request = CancellationRequest()
        #expect(!(await onDedicatedThread { request.token.wait(timeout: timeout) }))
    }

    @Test func `wait(timeout:) on none returns false`() async {
        #expect(!(await onDedicatedThread { CancellationToken.none.wait(timeout: .milliseconds(20)) }))
    }

    // MARK: - wait() async

    @Test func `wait() returns at once for a token that is already cancelled`() async {
        await CancellationToken.cancelled.wait()
        let request = CancellationRequest()
        request.cancel()
        await request.token.wait()
    }

    @Test func `wait() returns when the request is cancelled`() async {
        let request = CancellationRequest()
        let waiter = Task {
            await request.token.wait()
            return request.token.isCancellationRequested
        }
        await onDedicatedThread { pause(.milliseconds(20)) }  // usually suspended by now; either order must work
        request.cancel()
        #expect(await waiter.value)
    }

    @Test func `wait() returns when the calling task is cancelled`() async {
        let request = CancellationRequest()
        let waiter = Task {
            await request.token.wait()
            return Task.isCancelled
        }
        await onDedicatedThread { pause(.milliseconds(20)) }
        waiter.cancel()
        #expect(await waiter.value)
        #expect(!request.isCancellationRequested)
    }

    @Test func `wait() on none returns only when the task is cancelled`() async {
        let waiter = Task {
            await CancellationToken.none.wait()
            return Task.isCancelled
        }
        waiter.cancel()
        #expect(await waiter.value)
    }

    @Test func `wait() in an already cancelled task returns at once`() async {
        let request = CancellationRequest()
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await request.token.wait()
            return true
        }
        #expect(await waiter.value)
    }

    @Test func `wait() releases its handler when task cancellation ended it`() async {
        let request = CancellationRequest()
        let runs = Counter()
        request.token.onCancel { runs.increment() }
        let waiter = Task { await request.token.wait() }
        waiter.cancel()
        await waiter.value
        request.cancel()
        #expect(runs.value == 1)  // only ours: the wait's handler was removed (it would have run harmlessly)
    }
}
