import Cancellation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct TaskCancellationBridgeTests {
    // MARK: - withCancellation

    @Test func `withCancellation cancels the current task before cancel() returns`() async {
        let request = CancellationRequest()
        let observed = await Task {
            await withCancellation(request.token) { () -> (before: Bool, after: Bool) in
                let before = Task.isCancelled
                request.cancel()  // synchronously runs the handler that cancels this task
                return (before, Task.isCancelled)
            }
        }.value
        #expect(!observed.before)
        #expect(observed.after)
    }

    @Test func `withCancellation: cancel() on another thread has cancelled the task when it returns`() async {
        let request = CancellationRequest()
        let started = Signal()
        let task = Task {
            await withCancellation(request.token) {
                started.fire()
                await request.token.wait()
            }
        }
        let cancelledWhenCancelReturned = await onDedicatedThread { () -> Bool in
            started.wait()
            request.cancel()
            return task.isCancelled
        }
        await task.value
        #expect(cancelledWhenCancelReturned)
    }

    @Test func `withCancellation with an already cancelled token cancels the task before operation starts`() async {
        let request = CancellationRequest()
        request.cancel()
        let cancelledAtStart = await Task {
            await withCancellation(request.token) { Task.isCancelled }
        }.value
        #expect(cancelledAtStart)
        let withCancelledToken = await Task {
            await withCancellation(.cancelled) { Task.isCancelled }
        }.value
        #expect(withCancelledToken)
    }

    @Test func `withCancellation makes Task.sleep throw CancellationError`() async {
        let request = CancellationRequest()
        let task = Task {
            try await withCancellation(request.token) {
                try await Task.sleep(for: .seconds(3600))
            }
        }
        request.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func `after withCancellation returns, a later cancel does not affect the task`() async {
        let request = CancellationRequest()
        let outcome = await Task { () -> (inside: Bool, after: Bool) in
            let inside = await withCancellation(request.token) { Task.isCancelled }
            request.cancel()
            return (inside, Task.isCancelled)
        }.value
        #expect(!outcome.inside)
        #expect(!outcome.after)
    }

    @Test func `withCancellation removes its handler from the token when it returns`() async {
        let request = CancellationRequest()
        let runs = Counter()
        request.token.onCancel { runs.increment() }
        await Task { await withCancellation(request.token) {} }.value
        request.cancel()
        #expect(runs.value == 1)
    }

    @Test func `withCancellation with none runs the operation and does not cancel`() async throws {
        let value = try await Task {
            try await withCancellation(.none) { () throws -> Int in
                try Task.checkCancellation()
                return 42
            }
        }.value
        #expect(value == 42)
    }

    @Test func `withCancellation returns the operation's value and rethrows its error`() async {
        struct Failure: Error {}
        let request = CancellationRequest()
        #expect(await withCancellation(request.token) { 7 } == 7)
        await #expect(throws: Failure.self) {
            try await withCancellation(request.token) { throw Failure() }
        }
    }

    // MARK: - withTaskCancellationToken

    /// An `async let` child's memory goes with its scope, so nothing may hold the child once `withCancellation` in it
    /// returned: the handler's closure, which holds the task, is released before `unregisterAndWait` returns, even
    /// while the cancelling thread still runs older handlers (here: until the child has ended and a new child took its
    /// place). The shape that crashed in an AsyncHTTPClient adapter under many cancelled requests; it did not crash
    /// here before the fix, so the rule itself is pinned by `CancellationRegistrationTests`' "a handler that ran is
    /// released before unregisterAndWait returns, while cancel() runs older handlers".
    @Test
    func
        `withCancellation in an async let child, cancelled from another thread, holds nothing of the child once it returned`()
        async
    {
        for _ in 0..<Stress.heavy {
            let request = CancellationRequest()
            let release = Signal()
            request.token.onCancel { release.wait() }  // older: holds cancel() until the child has ended
            async let child: Void = withCancellation(request.token) { await request.token.wait() }
            async let cancelled: Void = onDedicatedThread { request.cancel() }
            await child
            async let successor: Int = withCancellation(request.token) { 1 }  // may reuse the ended child's memory
            #expect(await successor == 1)
            release.fire()
            await cancelled
        }
    }

    /// The other way a handler goes: dropped unrun, by the thread that lets go of the request's last reference, which
    /// may release it after `withCancellation` returned (nothing waits for a handler that does not run). The handle
    /// in its closure has forgotten the task by then.
    @Test
    func `withCancellation in an async let child while another thread drops its request holds nothing of the child`()
        async
    {
        for _ in 0..<Stress.heavy {
            let owner = Locked<CancellationRequest?>(CancellationRequest())
            let token = owner.withLock { $0!.token }
            async let child: Void = withCancellation(token) { await Task.yield() }
            async let dropped: Void = onDedicatedThread {
                let request = owner.withLock { $0.take() }
                _ = consume request  // the last reference: the handler is dropped unrun, on this thread
            }
            await child
            async let successor: Int = withCancellation(token) { 1 }  // may reuse the ended child's memory
            #expect(await successor == 1)
            await dropped
            #expect(!token.canBeCancelled)
        }
    }

    @Test func `withTaskCancellationToken cancels the token as soon as the task is cancelled`() async {
        let tokenBox = Locked<CancellationToken?>(nil)
        let ready = Signal()
        let task = Task {
            await withTaskCancellationToken { token in
                tokenBox.withLock { $0 = token }
                ready.fire()
                await token.wait()
                return token.isCancellationRequested
            }
        }
        await onDedicatedThread { ready.wait() }
        let token = tokenBox.value!
        #expect(!token.isCancellationRequested)
        task.cancel()
        #expect(token.isCancellationRequested)  // synchronously, through the task's cancellation handler
        #expect(await task.value)
    }

    @Test func `withTaskCancellationToken runs the token's handlers on the thread that cancels the task`() async {
        let ranInHandler = Locked(false)
        let ready = Signal()
        let task = Task {
            await withTaskCancellationToken { token in
                token.onCancel { ranInHandler.withLock { $0 = true } }
                ready.fire()
                await token.wait()
            }
        }
        let ranWhenCancelReturned = await onDedicatedThread { () -> Bool in
            ready.wait()
            task.cancel()
            return ranInHandler.value
        }
        await task.value
        #expect(ranWhenCancelReturned)
    }

    @Test func `withTaskCancellationToken in an already cancelled task gives a cancelled token`() async {
        let cancelled = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await withTaskCancellationToken { $0.isCancellationRequested }
        }.value
        #expect(cancelled)
    }

    @Test func `withTaskCancellationToken's token can no longer be cancelled after body returns`() async {
        let counter = DeinitCounter()
        let runs = Counter()
        let token = await withTaskCancellationToken { token in
            let tracked = counter.make()
            token.onCancel {
                tracked.touch()
                runs.increment()
            }
            #expect(token.canBeCancelled)
            return token
        }
        #expect(!token.canBeCancelled)
        #expect(counter.deallocated == 1)  // the stored handler was released without running
        #expect(runs.value == 0)
    }
}
