import Cancellation
import Dispatch
import FutureLib
import FutureLibConcurrencyHelpers
import FutureTestSupport
import Synchronization
import TestCombinators
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureMapTests {
    @Test("map transforms a success; a failure passes through without calling the closure")
    func mapTransformsSuccessAndPassesFailure() async throws {
        #expect(try await Future(value: 2).map { $0 * 10 }.value() == 20)
        let called = CallFlag()
        let failed = Future<Int>(error: SampleError()).map { value -> Int in
            called.set()
            return value
        }
        await #expect(throws: SampleError()) { try await failed.value() }
        #expect(!called.isSet)
    }

    @Test("a throwing closure fails the result with its error", arguments: FutureCombinator.throwing)
    func throwingClosureFails(_ combinator: FutureCombinator) async {
        let source = combinator.handlesErrors ? Future<Int>(error: SampleError(code: 0)) : Future(value: 1)
        let future = combinator.applyThrowing(SampleError(code: 2), to: source)
        #expect(future != nil)
        await #expect(throws: SampleError(code: 2)) { try await future?.value() }
    }

    @Test("flatMap continues with the inner future's result")
    func flatMapChains() async throws {
        let inner = Promise<String>()
        let chained = Future(value: 3).flatMap { n in inner.future.map { "\($0)\(n)" } }
        inner.fulfill("x")
        #expect(try await chained.value() == "x3")
        let failingInner = Future(value: 3).flatMap { _ in Future<Int>(error: SampleError()) }
        await #expect(throws: SampleError()) { try await failingInner.value() }
    }

    @Test("filter keeps passing values and fails others with FutureError.noSuchElement")
    func filterKeepsOrRejects() async throws {
        #expect(try await Future(value: 4).filter { $0 > 3 }.value() == 4)
        await #expect(throws: FutureError.noSuchElement) { try await Future(value: 1).filter { $0 > 3 }.value() }
    }

    @Test("transform maps success and failure separately; the Result form can switch them")
    func transformBothWays() async throws {
        let success = Future(value: 2).transform(success: { "\($0)" }, failure: { _ in SampleError(code: 9) })
        #expect(try await success.value() == "2")
        let failure = Future<Int>(error: SampleError()).transform(
            success: { "\($0)" },
            failure: { _ in SampleError(code: 9) }
        )
        await #expect(throws: SampleError(code: 9)) { try await failure.value() }
        let flipped = Future<Int>(error: SampleError()).transform { result -> Result<String, any Error> in
            .success(result.isSuccess ? "up" : "down")
        }
        #expect(try await flipped.value() == "down")
    }

    @Test("transform is symmetric: either closure may throw, and the thrown error fails the new future")
    func transformEitherSideThrows() async throws {
        let fromSuccess = Future(value: 2).transform(
            success: { _ -> String in throw SampleError(code: 3) },
            failure: { $0 }
        )
        await #expect(throws: SampleError(code: 3)) { try await fromSuccess.value() }
        let fromFailure = Future<Int>(error: SampleError()).transform(
            success: { "\($0)" },
            failure: { _ in throw SampleError(code: 4) }
        )
        await #expect(throws: SampleError(code: 4)) { try await fromFailure.value() }
    }

    @Test("andThen's result may be discarded: it is used for its side effect")
    func andThenIsDiscardable() async {
        let ran = Signal()
        Future(value: 1).andThen { _ in ran.fire() }  // no `_ =`: compiles without a warning
        #expect(await onDedicatedThread { ran.wait() })
    }

    @Test("mapError transforms only the error")
    func mapErrorTransformsError() async throws {
        await #expect(throws: SampleError(code: 7)) {
            try await Future<Int>(error: SampleError()).mapError { _ in SampleError(code: 7) }.value()
        }
        #expect(try await Future(value: 1).mapError { _ in SampleError(code: 7) }.value() == 1)
    }

    @Test("andThen runs the side effect before passing the result on unchanged")
    func andThenPassesThrough() async throws {
        let seen = Lock<[String]>([])
        let future = Future(value: 5)
            .andThen { _ in seen.withLock { $0.append("first") } }
            .andThen { _ in seen.withLock { $0.append("second") } }
        #expect(try await future.value() == 5)
        #expect(seen.withLock { $0 } == ["first", "second"])
        let failed = Future<Int>(error: SampleError()).andThen { result in
            seen.withLock { $0.append(result.isSuccess ? "ok" : "error") }
        }
        await #expect(throws: SampleError()) { try await failed.value() }
        #expect(seen.withLock { $0.last } == "error")
    }

    @Test("hop(to:) completes the new future on the given queue")
    func hopCompletesOnContext() async throws {
        let queue = DispatchQueue(label: "hop")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let source = Promise<Int>()
        // Registered before completion, so the synchronous continuation runs where the hop completes.
        let onQueue = source.future.hop(to: queue).map(on: .synchronous) { _ in
            DispatchQueue.getSpecific(key: key) ?? false
        }
        source.fulfill(1)
        #expect(try await onQueue.value())
    }

    @Test("the closure runs on the given context")
    func closureRunsOnContext() async throws {
        let queue = DispatchQueue(label: "map")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let onQueue = try await Future(value: 1).map(on: queue) { _ in DispatchQueue.getSpecific(key: key) ?? false }
            .value()
        #expect(onQueue)
    }

    @Test(
        "every combinator runs its closure exactly once, on the context given as on:",
        arguments: FutureCombinator.deriving
    )
    func combinatorClosureRunsOnContext(_ combinator: FutureCombinator) async {
        let queue = DispatchQueue(label: "FutureLibTests.combinator-context")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let calls = Locked<[Bool]>([])  // per call: whether it ran on `queue`
        let mark: @Sendable () -> Void = { calls.withLock { $0.append(DispatchQueue.getSpecific(key: key) ?? false) } }
        let value = Promise<Int>()
        let error = Promise<Int>()
        let future = combinator.apply(to: combinator.handlesErrors ? error.future : value.future, on: queue, mark)
        // Completed from this task, off the queue: the closure must still run on the queue.
        value.fulfill(1)
        error.reject(SampleError())
        _ = await awaitOutcome(future)
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(calls.value == [true])
    }

    // MARK: - Cancellation

    @Test(
        "a cancelled token completes the result with CancellationError promptly and never calls the closure",
        arguments: FutureCombinator.deriving + [.hop]
    )
    func cancelledTokenFailsPromptly(_ combinator: FutureCombinator) async {
        for alreadyCancelled in [true, false] {
            let source = Promise<Int>()
            let request = CancellationRequest()
            if alreadyCancelled { request.cancel() }
            let called = CallFlag()
            let token = request.token
            let mark: @Sendable () -> Void = { called.set() }
            let future = combinator.apply(to: source.future, on: .default, cancellationToken: token, mark)
            if !alreadyCancelled {
                #expect(!future.isCompleted)
                request.cancel()
            }
            // Promptly: before the source completes, without waiting on any context.
            #expect(isCancellation(future.result))
            source.reject(SampleError())  // a failure would reach recover/mapError if the closure could run
            _ = await awaitOutcome(future)
            #expect(isCancellation(future.result))
            #expect(!called.isSet)
        }
    }

    /// Counts the jobs handed to it and runs them inline.
    struct CountingContext: ExecutionContext {
        let jobs = Counter()
        func execute(_ work: @escaping @Sendable () -> Void) {
            jobs.increment()
            work()
        }
    }

    @Test("a cancelled token fails a pending map at once, runs nothing on its context and releases the closure")
    func cancelledMapRunsNothingOnContext() async {
        let source = Promise<Int>()
        let request = CancellationRequest()
        let context = CountingContext()
        let counter = DeinitCounter()
        let future: Future<Int>
        do {
            let capture = counter.make()
            future = source.future.map(on: context, cancellationToken: request.token) { value in
                capture.touch()
                return value
            }
        }
        request.cancel()
        #expect(isCancellation(future.result))
        #expect(counter.deallocated == 1)  // the stored closure left the source at once
        source.fulfill(1)
        #expect(isCancellation(future.result))
        #expect(context.jobs.value == 0)
    }

    @Test("a cancelled token fails a map whose closure is queued on its context, and the closure never runs")
    func cancelledMapWhileQueued() async {
        let queue = DispatchQueue(label: "FutureLibTests.queued-map")
        let gate = Signal()
        queue.async { gate.wait() }  // holds the queue, so the map's closure waits behind it
        let request = CancellationRequest()
        let called = CallFlag()
        let future = Future(value: 1).map(on: queue, cancellationToken: request.token) { value in
            called.set()
            return value
        }
        #expect(!future.isCompleted)
        request.cancel()
        #expect(isCancellation(future.result))  // at once, while the closure is still queued
        gate.fire()
        _ = await awaitOutcome(future)
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(!called.isSet)
    }

    @Test("flatMap completes with CancellationError while waiting on the inner future")
    func flatMapCancelledWhileWaitingOnInner() async {
        let inner = Promise<Int>()
        let request = CancellationRequest()
        let chained = Future(value: 1).flatMap(on: .synchronous, cancellationToken: request.token) { _ in inner.future }
        #expect(!chained.isCompleted)  // waiting on the inner future
        request.cancel()
        #expect(isCancellation(chained.result))
        inner.fulfill(2)  // too late: the result stays cancelled
        #expect(isCancellation(chained.result))
    }

    @Test("recoverWith completes with CancellationError while waiting on the inner future")
    func recoverWithCancelledWhileWaitingOnInner() async {
        let fallback = Promise<Int>()
        let request = CancellationRequest()
        let recovered = Future<Int>(error: SampleError()).recoverWith(
            on: .synchronous,
            cancellationToken: request.token
        ) { _ in
            fallback.future
        }
        #expect(!recovered.isCompleted)
        request.cancel()
        #expect(isCancellation(recovered.result))
        withExtendedLifetime(fallback) {}
    }

    @Test("recover never turns the token's cancellation into a value, even with a result waiting")
    func recoverDoesNotRecoverCancellation() async {
        let request = CancellationRequest()
        request.cancel()
        let recovered = Future<Int>(error: SampleError()).recover(cancellationToken: request.token) { _ in 42 }
        #expect(isCancellation(await awaitOutcome(recovered)))
    }

    @Test("a source that failed with CancellationError passes it on by default; policy .allErrors recovers it")
    func recoverHandlesSourceCancellation() async throws {
        // Deliberate: cancellation is not an error to recover from by default (`ErrorPolicy`).
        let passed = Future<Int>(error: CancellationError()).recover { _ in 1 }
        #expect(isCancellation(await awaitOutcome(passed)))
        #expect(try await Future<Int>(error: CancellationError()).recover(policy: .allErrors) { _ in 1 }.value() == 1)
    }

    @Test("the token's handler is released when the combinator completes first")
    func combinatorReleasesTokenHandler() async throws {
        let request = CancellationRequest()
        for _ in 0..<100 {
            _ = try await Future(value: 1).map(cancellationToken: request.token) { $0 }.value()
        }
        // Had handlers stayed on the token, cancelling would run 100 stale ones; it runs none.
        let ran = CallFlag()
        request.token.onCancel { ran.set() }
        request.cancel()
        #expect(ran.count == 1)
    }

    @Test("a chain of a million maps on .synchronous completes without overflowing the stack")
    func millionMapChain() async throws {
        // Built and completed on a dedicated thread: seconds of synchronous work must not occupy
        // the cooperative pool that the other tests need.
        let last = await onHeavyThread { () -> Result<Int, any Error>? in
            let promise = Promise<Int>()
            var future = promise.future
            for _ in 0..<Scale.million { future = future.map(on: .synchronous) { $0 + 1 } }
            promise.fulfill(0)
            return future.result
        }
        #expect(try last?.get() == Scale.million)
    }

    @Test("a chain of a million flatMaps on .synchronous completes without overflowing the stack")
    func millionFlatMapChain() async throws {
        let last = await onHeavyThread { () -> Result<Int, any Error>? in
            let promise = Promise<Int>()
            var future = promise.future
            for _ in 0..<Scale.million { future = future.flatMap(on: .synchronous) { Future(value: $0 + 1) } }
            promise.fulfill(0)
            return future.result
        }
        #expect(try last?.get() == Scale.million)
    }
}

extension FutureMapTests {
    /// `on: actor`: `map` and `flatMap` isolated to an actor.
    @Suite struct OnActor {
        @Test func `an actor map given a cancelled token fails at once without calling its closure`() async {
            let cache = Cache()
            let calls = CallFlag()
            let mapped = Promise<Int>().future.map(on: cache, cancellationToken: .cancelled) { _, value in
                calls.set()
                return value
            }
            #expect(isCancellation(mapped.result))
            #expect(!calls.isSet)
        }

        @Test func `an actor flatMap given a cancelled token fails at once without calling its closure`() {
            let calls = CallFlag()
            let chained = Promise<Int>().future.flatMap(on: Cache(), cancellationToken: .cancelled) { _, value in
                calls.set()
                return Future(value: value)
            }
            #expect(isCancellation(chained.result))
            #expect(!calls.isSet)
        }
    }
}

extension FutureMapTests {
    /// Async closures in `map`.
    @Suite struct AsyncClosures {
        @Test
        func
            `an async map is cancelled by its token mid-await: the task sees it, the result fails at once, the captures are released`()
            async throws
        {
            let request = CancellationRequest()
            let started = Promise<Void>()
            let sawCancellation = Promise<Bool>()
            let counter = DeinitCounter()
            var tracked: Tracked? = counter.make()
            let mapped = Future(value: 1).map(cancellationToken: request.token) { [tracked] value in
                tracked?.touch()
                started.fulfill(())
                try? await Task.sleep(for: .seconds(600))
                sawCancellation.fulfill(Task.isCancelled)
                return value
            }
            tracked = nil
            try await started.future.value()
            #expect(!mapped.isCompleted)
            request.cancel()
            #expect(isCancellation(mapped.result))  // at once: before the task noticed
            #expect(try await sawCancellation.future.value())
            #expect(await eventually { counter.deallocated == 1 })
        }
    }

    // MARK: - A token's box (MapCallback, FlatMapCallback)

    @Test func `a flatMap with a token on a completed future still waits for its inner future with that token`() {
        let request = CancellationRequest()
        let inner = Promise<Int>()
        let derived = Future(value: 1).flatMap(on: .synchronous, cancellationToken: request.token) { _ in inner.future }
        #expect(!derived.isCompleted)
        request.cancel()
        #expect(isCancellation(derived.result))
        inner.fulfill(2)
        #expect(isCancellation(derived.result))
    }

    @Test func `maps and flatMaps with a striped token on futures that never complete go with their request`() {
        let counter = DeinitCounter()
        var requests = (0..<100).map { _ in CancellationRequest() }
        for request in requests { #expect(request.token.stripeRegistrations()) }
        var held: [Future<Int>] = []
        for (index, request) in requests.enumerated() {
            let source = Future<Int>(on: DroppingContext()) { 0 }
            let tracked = (counter.make(), counter.make())
            let mapped = source.map(on: .synchronous, cancellationToken: request.token) { value in
                tracked.0.touch()
                return value
            }
            _ = mapped.flatMap(on: .synchronous, cancellationToken: request.token) { value in
                tracked.1.touch()
                return Future(value: value)
            }
            if index.isMultiple(of: 2) { held.append(source) }
        }
        #expect(counter.deallocated == 0)  // each token can still fire
        requests.removeAll()  // uncancelled: the chains on sources nothing else holds go
        #expect(counter.deallocated == 100)
        held.removeAll()  // the others stayed on their sources, which could still complete
        #expect(counter.deallocated == 200)
    }
}

// MARK: - Async closures: which form, values and errors, cancellation, where the task runs

extension FutureMapTests.AsyncClosures {
    @Test
    func `a closure with no await picks the synchronous form; one that awaits, or says async, the async form`()
        async throws
    {
        let source = Future(value: 1)
        #expect(try await source.map { _ in inTask() }.value() == false)
        #expect(
            try await source.map { _ in
                await Task.yield()
                return inTask()
            }.value() == true
        )
        #expect(try await source.map { _ async in inTask() }.value() == true)
        #expect(try await source.map(on: .mainActor) { _ in inTask() }.value() == false)
        #expect(try await source.map(on: .mainActor) { _ async in inTask() }.value() == true)
    }

    @Test func `async map and flatMap give the closure's value or error`() async throws {
        let source = Future(value: 2)
        let failed = Future<Int>(error: SampleError(code: 3))
        #expect(
            try await source.map { value in
                await Task.yield()
                return value * 10
            }.value() == 20
        )
        #expect(
            try await source.flatMap { value in
                await Task.yield()
                return Future(value: value + 1)
            }.value() == 3
        )
        await #expect(throws: SampleError(code: 3)) {
            try await failed.map { v in
                await Task.yield()
                return v
            }.value()
        }
        let thrown = source.map { _ async throws -> Int in throw SampleError(code: 6) }
        await #expect(throws: SampleError(code: 6)) { try await thrown.value() }
    }

    @Test func `an async map given a cancelled token fails at once and never starts its closure`() async {
        let calls = CallFlag()
        let mapped = Promise<Int>().future.map(cancellationToken: .cancelled) { value in
            calls.set()
            await Task.yield()
            return value
        }
        #expect(isCancellation(mapped.result))
        #expect(!calls.isSet)
    }

    @Test(arguments: [FutureCombinator.map, .flatMap])
    func `every async closure form is cancelled by its token mid-await: the task sees it, a result fails at once`(
        form: FutureCombinator
    ) async throws {
        try await expectAsyncFormCancelledMidAwait(form)
    }

    @Test func `async map and flatMap on .mainActor run on the main actor`() async throws {
        let source = Future(value: 2)
        @MainActor func check() { MainActor.assertIsolated() }
        #expect(
            try await source.map(on: .mainActor) { v in
                await Task.yield()
                check()
                return v
            }.value() == 2
        )
        let flat = source.flatMap(on: .mainActor) { v in
            await Task.yield()
            check()
            return Future(value: v)
        }
        #expect(try await flat.value() == 2)
    }

    @Test func `async combinators on a serial queue run their task's jobs there`() async throws {
        let queue = ProbedQueue(label: "FutureAsyncClosuresTests.serial")
        let onQueue = try await Future(value: 1).map(on: queue.queue) { _ in
            let before = queue.isCurrent
            await Task.yield()
            return before && queue.isCurrent
        }.value()
        #expect(onQueue)
    }
}

// MARK: - On the main actor

extension FutureMapTests {
    /// `on: .mainActor`: the family's closures on the main actor.
    @Suite struct OnMainActor {
        @Test func `a .mainActor combinator given a cancelled token fails at once without calling its closure`() async {
            let calls = CallFlag()
            let mapped = Promise<Int>().future.map(on: .mainActor, cancellationToken: .cancelled) { value in
                calls.set()
                return value
            }
            #expect(isCancellation(mapped.result))
            #expect(!calls.isSet)
        }

        @Test(arguments: [FutureCombinator.map, .flatMap, .filter, .transform, .transformResult, .mapError, .andThen])
        func `every combinator on .mainActor runs its closure on the main actor`(_ combinator: FutureCombinator) async {
            await expectClosureOnMainActor(combinator)
        }

        @Test func `hop accepts .mainActor`() async throws {
            #expect(try await Future(value: 1).hop(to: .mainActor).value() == 1)
        }
    }
}
