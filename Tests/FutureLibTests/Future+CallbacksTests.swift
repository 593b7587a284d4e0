import Dispatch
import FutureLib
import FutureTestSupport
import TestCombinators
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureCallbacksTests {
    enum Kind: String, CaseIterable, Sendable {
        case onComplete, onSuccess, onFailure
    }

    /// Registers a continuation of `kind` that reports `true` when called with a success,
    /// `false` when called with an error.
    static func register(
        _ kind: Kind,
        on future: Future<Int>,
        context: some ExecutionContext,
        token: CancellationToken = .none,
        _ report: @escaping @Sendable (Result<Int, any Error>) -> Void
    ) {
        switch kind {
        case .onComplete: future.onComplete(on: context, cancellationToken: token, report)
        case .onSuccess: future.onSuccess(on: context, cancellationToken: token) { report(.success($0)) }
        case .onFailure: future.onFailure(on: context, cancellationToken: token) { report(.failure($0)) }
        }
    }

    // MARK: - Exactly once, with the right outcome

    @Test func `onComplete runs exactly once with the result`() async {
        let promise = Promise<Int>()
        await confirmation(expectedCount: 1) { ran in
            let done = Signal()
            promise.future.onComplete { result in
                if result.successValue == 3 { ran() }
                done.fire()
            }
            promise.fulfill(3)
            promise.fulfill(4)
            #expect(await onDedicatedThread { done.wait() })
        }
    }

    @Test func `onSuccess runs for a success and never for a failure`() async {
        await confirmation(expectedCount: 1) { ran in
            let succeeded = Promise<Int>()
            succeeded.future.onSuccess(on: .synchronous) { if $0 == 1 { ran() } }
            succeeded.fulfill(1)
            let failed = Promise<Int>()
            failed.future.onSuccess(on: .synchronous) { _ in ran() }
            failed.reject(TestFailure())
        }
    }

    @Test func `onFailure runs for a failure and never for a success`() async {
        await confirmation(expectedCount: 1) { ran in
            let failed = Promise<Int>()
            failed.future.onFailure(on: .synchronous) { if $0 as? TestFailure == TestFailure(code: 2) { ran() } }
            failed.reject(TestFailure(code: 2))
            let succeeded = Promise<Int>()
            succeeded.future.onFailure(on: .synchronous) { _ in ran() }
            succeeded.fulfill(1)
        }
    }

    @Test func `registering on a completed future runs the continuation at once, exactly once`() async {
        let future = Future(value: 1)
        await confirmation(expectedCount: 3) { ran in
            future.onComplete(on: .synchronous) { _ in ran() }
            future.onSuccess(on: .synchronous) { _ in ran() }
            future.onFailure(on: .synchronous) { _ in ran() }  // never: a success
            Future<Int>(error: TestFailure()).onFailure(on: .synchronous) { _ in ran() }
        }
    }

    @Test func `a synchronous continuation on a completed future runs on the registering thread before returning`() {
        let thread = ThreadID.current
        let ranHere = Locked<Bool?>(nil)
        Future(value: 1).onComplete(on: .synchronous) { _ in
            ranHere.withLock { $0 = ThreadID.current == thread }
        }
        #expect(ranHere.value == true)
    }

    @Test func `a synchronous continuation runs on the completing thread`() async {
        let promise = Promise<Int>()
        let ranOn = Locked<ThreadID?>(nil)
        promise.future.onComplete(on: .synchronous) { _ in ranOn.withLock { $0 = ThreadID.current } }
        let completer = await onDedicatedThread {
            promise.fulfill(1)
            return ThreadID.current
        }
        #expect(ranOn.value == completer)
    }

    // MARK: - Context and order

    @Test(arguments: Kind.allCases, [true, false])
    func `a continuation runs on the context it was given`(kind: Kind, succeed: Bool) async {
        let probe = ProbedQueue()
        let promise = Promise<Int>()
        let onQueue = Locked<[Bool]>([])
        Self.register(kind, on: promise.future, context: probe.queue) { _ in
            dispatchPrecondition(condition: .onQueue(probe.queue))
            onQueue.withLock { $0.append(probe.isCurrent) }
        }
        if succeed { promise.fulfill(1) } else { promise.reject(TestFailure()) }
        await probe.drain()
        let expected = kind == .onComplete || (kind == .onSuccess) == succeed
        #expect(onQueue.value == (expected ? [true] : []))
    }

    @Test func `a continuation registered on a completed future runs on its context`() async {
        let probe = ProbedQueue()
        let onQueue = Locked<[Bool]>([])
        Future(value: 1).onComplete(on: probe.queue) { _ in onQueue.withLock { $0.append(probe.isCurrent) } }
        await probe.drain()
        #expect(onQueue.value == [true])
    }

    @Test func `a continuation on .default runs exactly once`() async {
        let promise = Promise<Int>()
        await confirmation(expectedCount: 1) { ran in
            let done = Signal()
            promise.future.onSuccess(on: .default) { _ in
                ran()
                done.fire()
            }
            promise.fulfill(1)
            #expect(await onDedicatedThread { done.wait() })
        }
    }

    @Test func `continuations on a serial queue run in registration order`() async {
        let probe = ProbedQueue()
        let promise = Promise<Int>()
        let order = Locked<[Int]>([])
        for index in 0..<100 {
            let kind = Kind.allCases[index % 2]  // onComplete and onSuccess both see a success
            Self.register(kind, on: promise.future, context: probe.queue) { _ in order.withLock { $0.append(index) } }
        }
        promise.fulfill(1)
        for index in 100..<150 {
            promise.future.onComplete(on: probe.queue) { _ in order.withLock { $0.append(index) } }
        }
        await probe.drain()
        #expect(order.value == Array(0..<150))
    }

    @Test func `continuations on .synchronous run in registration order`() {
        let promise = Promise<Int>()
        let order = Locked<[Int]>([])
        for index in 0..<50 {
            promise.future.onComplete(on: .synchronous) { _ in order.withLock { $0.append(index) } }
        }
        promise.fulfill(1)
        #expect(order.value == Array(0..<50))
    }

    @Test func `a continuation registered during completion runs after the earlier ones on the same serial queue`()
        async
    {
        let probe = ProbedQueue()
        let promise = Promise<Int>()
        let order = Locked<[String]>([])
        promise.future.onComplete(on: .synchronous) { _ in
            promise.future.onComplete(on: probe.queue) { _ in order.withLock { $0.append("registered later") } }
        }
        promise.future.onComplete(on: probe.queue) { _ in order.withLock { $0.append("registered earlier") } }
        promise.fulfill(1)
        await probe.drain()
        #expect(order.value == ["registered earlier", "registered later"])
    }

    @Test
    func
        `a continuation registered from another thread after completion runs after the earlier ones on the same serial queue`()
        async
    {
        let probe = ProbedQueue()
        let promise = Promise<Int>()
        let order = Locked<[Int]>([])
        for index in 0..<2_000 {
            promise.future.onComplete(on: probe.queue) { _ in order.withLock { $0.append(index) } }
        }
        await onThreads(2) { thread in
            if thread == 0 {
                promise.fulfill(1)
            } else {
                while !promise.future.isCompleted {}
                promise.future.onComplete(on: probe.queue) { _ in order.withLock { $0.append(2_000) } }
            }
        }
        await probe.drain()
        let ran = order.value
        #expect(ran == Array(0...2_000), "the late one ran at position \(ran.firstIndex(of: 2_000) ?? -1)")
    }

    @Test func `a synchronous continuation may wait for a continuation it registers on another context`() async {
        let promise = Promise<Int>()
        let probe = ProbedQueue()
        let waited = Locked<Bool?>(nil)
        promise.future.onComplete(on: .synchronous) { _ in
            let inner = Signal()
            promise.future.onComplete(on: probe.queue) { _ in inner.fire() }
            waited.withLock { $0 = inner.wait() }
        }
        await onDedicatedThread { promise.fulfill(1) }
        #expect(waited.value == true)
    }

    // MARK: - Cancellation by token

    @Test(arguments: Kind.allCases, [true, false])
    func
        `a token cancelled before completion calls onComplete and onFailure once with CancellationError, onSuccess never`(
            kind: Kind,
            succeed: Bool
        ) async
    {
        let promise = Promise<Int>()
        let request = CancellationRequest()
        // Every call counts: a second call with the later result, or an onSuccess call, fails the count.
        await confirmation(expectedCount: kind == .onSuccess ? 0 : 1) { ran in
            Self.register(kind, on: promise.future, context: .synchronous, token: request.token) { result in
                #expect(result.isCancellation, "called with \(result), not CancellationError")
                ran()
            }
            request.cancel()
            request.cancel()  // cancelling twice is a no-op
            if succeed {  // too late for this continuation
                promise.fulfill(1)
            } else {
                promise.reject(TestFailure())
            }
        }
    }

    @Test func `the cancellation reaches the continuation on its context`() async {
        let probe = ProbedQueue()
        let promise = Promise<Int>()
        let request = CancellationRequest()
        let seen = Locked<[Bool]>([])
        promise.future.onFailure(on: probe.queue, cancellationToken: request.token) { error in
            seen.withLock { $0.append(probe.isCurrent && error is CancellationError) }
        }
        request.cancel()
        await probe.drain()
        #expect(seen.value == [true])
    }

    @Test(arguments: Kind.allCases)
    func `a token cancelled before completion releases the continuation at once`(kind: Kind) {
        let counter = DeinitCounter()
        let promise = Promise<Int>()
        let request = CancellationRequest()
        do {
            let tracked = counter.make()
            Self.register(kind, on: promise.future, context: .synchronous, token: request.token) { _ in tracked.touch()
            }
        }
        #expect(counter.deallocated == 0)  // held by the pending future
        request.cancel()
        #expect(counter.deallocated == 1)  // released while the future is still pending
        #expect(!promise.future.isCompleted)
        withExtendedLifetime(promise) {}
    }

    @Test func `a continuation is released after it ran`() {
        let counter = DeinitCounter()
        let promise = Promise<Int>()
        let request = CancellationRequest()
        do {
            let tracked = counter.make()
            promise.future.onComplete(on: .synchronous, cancellationToken: request.token) { _ in tracked.touch() }
            let other = counter.make()
            promise.future.onSuccess(on: .synchronous) { _ in other.touch() }
        }
        #expect(counter.deallocated == 0)
        promise.fulfill(1)
        #expect(counter.deallocated == 2)
    }

    @Test func `completion releases the token's handler, which held the future`() {
        let request = CancellationRequest()
        var promise: Promise<Int>? = Promise<Int>()
        let futureProbe = WeakProbe(promise!.future)
        promise!.future.onComplete(on: .synchronous, cancellationToken: request.token) { _ in }
        promise!.fulfill(1)
        promise = nil
        #expect(!futureProbe.isAlive)  // the live request no longer holds a handler that captures it
        withExtendedLifetime(request) {}
    }

    @Test func `cancelling a continuation leaves the future pending and other continuations untouched`() async throws {
        let promise = Promise<Int>()
        let request = CancellationRequest()
        await confirmation(expectedCount: 1) { others in
            promise.future.onSuccess(on: .synchronous, cancellationToken: request.token) { _ in
                Issue.record("cancelled")
            }
            promise.future.onSuccess(on: .synchronous) { _ in others() }
            request.cancel()
            #expect(promise.future.result == nil)
            promise.fulfill(2)
        }
        #expect(try await promise.future.value() == 2)
    }

    @Test(arguments: Kind.allCases, [true, false])
    func `a token already cancelled at registration wins over an existing result`(kind: Kind, succeed: Bool) async {
        let future = succeed ? Future(value: 1) : Future<Int>(error: TestFailure())
        await confirmation(expectedCount: kind == .onSuccess ? 0 : 1) { ran in
            Self.register(kind, on: future, context: .synchronous, token: .cancelled) { result in
                #expect(result.isCancellation)
                ran()
            }
        }
        #expect(future.result?.successValue == (succeed ? 1 : nil))
    }

    @Test(arguments: Kind.allCases)
    func `a token already cancelled at registration on a pending future cancels only the continuation`(kind: Kind) async
    {
        let promise = Promise<Int>()
        await confirmation(expectedCount: kind == .onSuccess ? 0 : 1) { ran in
            Self.register(kind, on: promise.future, context: .synchronous, token: .cancelled) { result in
                #expect(result.isCancellation)
                ran()
            }
            promise.fulfill(1)
        }
        #expect(promise.future.result?.successValue == 1)
    }

    @Test func `cancelling the token after completion changes nothing`() async {
        let promise = Promise<Int>()
        let request = CancellationRequest()
        await confirmation(expectedCount: 1) { ran in
            promise.future.onComplete(on: .synchronous, cancellationToken: request.token) { result in
                #expect(result.successValue == 1)
                ran()
            }
            promise.fulfill(1)
            request.cancel()
            request.cancel()
        }
    }

    // MARK: - Continuations run outside locks

    @Test func `a continuation may register another continuation on the same future`() async {
        let promise = Promise<Int>()
        await confirmation(expectedCount: 2) { ran in
            promise.future.onComplete(on: .synchronous) { _ in
                ran()
                promise.future.onComplete(on: .synchronous) { _ in ran() }
            }
            promise.fulfill(1)
        }
    }

    @Test func `a continuation may resolve another promise and cancel another continuation's token`() async {
        let first = Promise<Int>()
        let second = Promise<Int>()
        let third = Promise<Int>()
        let request = CancellationRequest()
        await confirmation(expectedCount: 2) { ran in
            first.future.onSuccess(on: .synchronous) { value in
                request.cancel()
                second.fulfill(value + 1)
            }
            third.future.onFailure(on: .synchronous, cancellationToken: request.token) { error in
                if error is CancellationError { ran() }
            }
            second.future.onSuccess(on: .synchronous) { if $0 == 2 { ran() } }
            first.fulfill(1)
        }
        #expect(!third.future.isCompleted)
    }

    @Test func `a continuation that blocks briefly does not hold up registration or completion elsewhere`() async {
        let promise = Promise<Int>()
        let other = Promise<Int>()
        let entered = Signal()
        let release = Signal()
        promise.future.onComplete(on: .synchronous) { _ in
            entered.fire()
            release.wait()
        }
        async let completing: Void = onDedicatedThread { promise.fulfill(1) }
        #expect(await onDedicatedThread { entered.wait() })
        // While the continuation blocks: register on the same future, complete another.
        await confirmation(expectedCount: 2) { ran in
            promise.future.onComplete(on: .synchronous) { _ in ran() }
            other.future.onComplete(on: .synchronous) { _ in ran() }
            other.fulfill(2)
        }
        #expect(promise.future.isCompleted)
        release.fire()
        await completing
    }

    // MARK: - Async onFailure

    @Test func `async onFailure gets the error in a task, skips a CancellationError by default, and gets its token's`()
        async
    {
        let errors = Locked<[Int]>([])
        let reported = Promise<Void>()
        Future<Int>(error: TestFailure(code: 1)).onFailure { error in
            await Task.yield()
            errors.withLock { $0.append((error as? TestFailure)?.code ?? -1) }
            reported.fulfill(())
        }
        let skipped = Counter()
        Future<Int>(error: CancellationError()).onFailure { _ in
            await Task.yield()
            skipped.increment()
        }
        let all = Promise<Void>()
        Future<Int>(error: CancellationError()).onFailure(policy: .allErrors) { _ in
            await Task.yield()
            all.fulfill(())
        }
        let own = Promise<Bool>()
        Promise<Int>().future.onFailure(cancellationToken: .cancelled) { error in
            await Task.yield()
            own.fulfill(error is CancellationError)
        }
        let onMain = Promise<Void>()
        Future<Int>(error: TestFailure(code: 2)).onFailure(on: .mainActor) { _ in
            MainActor.assertIsolated()
            await Task.yield()
            onMain.fulfill(())
        }
        _ = try? await reported.future.value()
        _ = try? await all.future.value()
        _ = try? await onMain.future.value()
        #expect(errors.value == [1])
        #expect((try? await own.future.value()) == true)
        #expect(skipped.value == 0)
    }
}

extension FutureCallbacksTests {
    /// `on: actor`: continuations isolated to an actor.
    @Suite struct OnActor {
        @Test func `continuations registered with on: self run isolated to the actor`() async throws {
            let cache = Cache()
            let promise = Promise<Int>()
            await cache.load("answer", from: promise.future)
            promise.fulfill(42)
            try await cache.filled.future.value()
            #expect(await cache.values == ["answer": 42])
            #expect(try await cache.doubled(Future(value: 5)).value() == 11)
            #expect(try await cache.result(of: Future(value: 3)).value() == "3")
        }

        @Test func `a cancelled token removes an actor continuation: onFailure gets CancellationError on the actor`()
            async throws
        {
            let cache = Cache()
            let request = CancellationRequest()
            let promise = Promise<Int>()
            await cache.load("never", from: promise.future, cancellationToken: request.token)
            request.cancel()
            try await cache.filled.future.value()
            promise.fulfill(1)
            #expect(await cache.values.isEmpty)
            let errors = await cache.errors
            #expect(errors.count == 1 && errors.first is CancellationError)
        }
    }
}

extension FutureCallbacksTests {
    /// `on: .mainActor`: continuations on the main actor.
    @Suite struct OnMainActor {
        @Test(arguments: [false, true])
        func `.mainActor continuations run on the main actor in registration order`(completedFirst: Bool) async throws {
            let log = MainActorLog()
            let promise = Promise<Int>()
            if completedFirst { promise.fulfill(1) }
            let done = Promise<Void>()
            for index in 0..<100 {
                switch index % 3 {
                case 0:
                    promise.future.onSuccess(on: .mainActor) { _ in
                        MainActor.assertIsolated()
                        log.entries.append(index)
                    }
                case 1:
                    promise.future.onComplete(on: .mainActor) { _ in
                        MainActor.assertIsolated()
                        log.entries.append(index)
                    }
                default:
                    _ = promise.future.map(on: .mainActor) { value in
                        MainActor.assertIsolated()
                        log.entries.append(index)
                        return value
                    }
                }
            }
            promise.future.onSuccess(on: .mainActor) { _ in done.fulfill(()) }
            promise.fulfill(1)
            try await done.future.value()
            #expect(await log.entries == Array(0..<100))
        }

        @Test
        func
            `a cancelled token removes a .mainActor continuation at once; onFailure gets CancellationError on the main actor`()
            async throws
        {
            let log = MainActorLog()
            let promise = Promise<Int>()
            let request = CancellationRequest()
            let probeCounter = DeinitCounter()
            let tracked = probeCounter.make()
            promise.future.onSuccess(on: .mainActor, cancellationToken: request.token) { _ in
                tracked.touch()
                log.entries.append(1)
            }
            let failed = Promise<Void>()
            promise.future.onFailure(on: .mainActor, cancellationToken: request.token) { error in
                MainActor.assertIsolated()
                log.errors.append(error)
                failed.fulfill(())
            }
            _ = consume tracked
            request.cancel()
            #expect(probeCounter.deallocated == 1)  // released at once
            try await failed.future.value()
            #expect(!promise.future.isCompleted)  // the token removed the continuations only
            promise.fulfill(2)
            let errors = await log.errors
            #expect(errors.count == 1 && errors.first is CancellationError)
            #expect(await log.entries.isEmpty)
        }
    }
}

extension FutureCallbacksTests {
    /// Async closures: `onSuccess` and `onComplete` run them in a task.
    @Suite struct AsyncClosures {
        @Test func `async onSuccess and onComplete run their closures in a task`() async throws {
            let success = Promise<Bool>()
            let complete = Promise<Bool>()
            Future(value: 1).onSuccess { _ in
                await Task.yield()
                success.fulfill(inTask())
            }
            Future<Int>(error: SampleError()).onComplete { result in
                await Task.yield()
                complete.fulfill(inTask() && !result.isSuccess)
            }
            #expect(try await success.future.value())
            #expect(try await complete.future.value())
        }

        @Test func `async onSuccess and onComplete with a token that can never fire run their closures in a task`()
            async throws
        {
            // `.none`, and a token whose request is gone, start the task without `withCancellation`.
            var request: CancellationRequest? = CancellationRequest()
            let spent = request!.token
            request = nil
            #expect(!spent.canBeCancelled)
            let pending = Promise<Int>()
            let success = Promise<Bool>()
            let complete = Promise<Bool>()
            let later = Promise<Int>()
            Future(value: 1).onSuccess(on: .synchronous, cancellationToken: spent) { _ in
                await Task.yield()
                success.fulfill(inTask() && !Task.isCancelled)
            }
            Future<Int>(error: SampleError()).onComplete(on: .default) { result in
                await Task.yield()
                complete.fulfill(inTask() && !result.isSuccess)
            }
            pending.future.onComplete(cancellationToken: spent) { result in
                await Task.yield()
                later.fulfill((try? result.get()) ?? 0)
            }
            pending.fulfill(7)
            #expect(try await success.future.value())
            #expect(try await complete.future.value())
            #expect(try await later.future.value() == 7)
        }

        @Test func `a token cancelled mid-await cancels an async onSuccess's task`() async throws {
            let request = CancellationRequest()
            let started = Promise<Void>()
            let sawCancellation = Promise<Bool>()
            Future(value: 1).onSuccess(cancellationToken: request.token) { _ in
                started.fulfill(())
                try? await Task.sleep(for: .seconds(600))
                sawCancellation.fulfill(Task.isCancelled)
            }
            try await started.future.value()
            request.cancel()
            #expect(try await sawCancellation.future.value())
        }
    }
}

// MARK: - Async closures and the main actor, across the continuations

extension FutureCallbacksTests.AsyncClosures {
    @Test(arguments: [FutureCombinator.onSuccess, .onComplete])
    func `every async closure form is cancelled by its token mid-await: the task sees it, a result fails at once`(
        form: FutureCombinator
    ) async throws {
        try await expectAsyncFormCancelledMidAwait(form)
    }

    @Test func `async onSuccess and onComplete on .mainActor run on the main actor`() async throws {
        let source = Future(value: 2)
        @MainActor func check() { MainActor.assertIsolated() }
        let done = Promise<Void>()
        source.onSuccess(on: .mainActor) { _ in
            await Task.yield()
            check()
            source.onComplete(on: .mainActor) { _ in
                await Task.yield()
                check()
                done.fulfill(())
            }
        }
        try await done.future.value()
    }
}

extension FutureCallbacksTests.OnMainActor {
    @Test func `the main actor runs during swift test (the main queue is serviced)`() async {
        @MainActor func onMain() -> Bool {
            MainActor.assertIsolated()
            return true
        }
        #expect(await onMain())
    }
}
