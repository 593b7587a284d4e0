import FutureLib
import Synchronization
import TestSupport
import Testing

/// Whether the caller runs inside a Swift task: the synchronous forms do not, the async ones do.
private func inTask() -> Bool {
    withUnsafeCurrentTask { $0 != nil }
}

/// Async closures in `map`, `flatMap`, `recover`, `recoverWith`, `onSuccess`, `onComplete`, `traverse`.
@Suite(.timeLimit(.minutes(3)))
struct FutureAsyncClosuresTests {
    @Test func `a closure with no await picks the synchronous form; one that awaits, or says async, the async form`()
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

    @Test func `async combinators give the closure's value or error`() async throws {
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
        #expect(
            try await failed.recover { _ in
                await Task.yield()
                return 4
            }.value() == 4
        )
        #expect(
            try await failed.recoverWith { _ in
                await Task.yield()
                return Future(value: 5)
            }.value() == 5
        )
        #expect(
            try await source.recover { _ in
                await Task.yield()
                return 0
            }.value() == 2
        )
        await #expect(throws: SampleError(code: 3)) {
            try await failed.map { v in
                await Task.yield()
                return v
            }.value()
        }
        let thrown = source.map { _ async throws -> Int in throw SampleError(code: 6) }
        await #expect(throws: SampleError(code: 6)) { try await thrown.value() }
        let lengths = ["a", "bb", "ccc"].traverse(maxConcurrency: 2) { text in
            await Task.yield()
            return text.count
        }
        #expect(try await lengths.value() == [1, 2, 3])
    }

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

    @Test func `an async combinator given a cancelled token fails at once and never starts its closure`() async {
        let calls = CallFlag()
        let pending = Promise<Int>()
        let mapped = pending.future.map(cancellationToken: .cancelled) { value in
            calls.set()
            await Task.yield()
            return value
        }
        #expect(isCancellation(mapped.result))
        let request = CancellationRequest()
        let recovered = pending.future.recover(cancellationToken: request.token) { _ in
            calls.set()
            await Task.yield()
            return 0
        }
        request.cancel()
        #expect(isCancellation(recovered.result))  // the token's cancellation is not recovered
        pending.reject(SampleError())
        #expect(isCancellation(await settled(recovered)))
        #expect(!calls.isSet)
    }

    @Test(arguments: ["map", "flatMap", "recover", "recoverWith", "onSuccess", "onComplete"])
    func `every async closure form is cancelled by its token mid-await: the task sees it, a result fails at once`(
        form: String
    ) async throws {
        let request = CancellationRequest()
        let token = request.token
        let started = Promise<Void>()
        let sawCancellation = Promise<Bool>()
        let body: @Sendable () async -> Void = {
            started.fulfill(())
            try? await Task.sleep(for: .seconds(600))
            sawCancellation.fulfill(Task.isCancelled)
        }
        let value = Future(value: 1)
        let failed = Future<Int>(error: SampleError())
        var result: Future<Int>?
        switch form {
        case "map":
            result = value.map(cancellationToken: token) { value in
                await body()
                return value
            }
        case "flatMap":
            result = value.flatMap(cancellationToken: token) { value in
                await body()
                return Future(value: value)
            }
        case "recover":
            result = failed.recover(cancellationToken: token) { _ in
                await body()
                return 0
            }
        case "recoverWith":
            result = failed.recoverWith(cancellationToken: token) { _ in
                await body()
                return Future(value: 0)
            }
        case "onSuccess": value.onSuccess(cancellationToken: token) { _ in await body() }
        default: value.onComplete(cancellationToken: token) { _ in await body() }
        }
        try await started.future.value()
        #expect(result?.isCompleted != true)
        request.cancel()
        if let result { #expect(isCancellation(result.result)) }  // at once: before the task noticed
        #expect(try await sawCancellation.future.value())
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

    @Test func `async closures on .mainActor run on the main actor`() async throws {
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
        let failed = Future<Int>(error: SampleError())
        #expect(
            try await failed.recover(on: .mainActor) { _ in
                await Task.yield()
                check()
                return 1
            }.value() == 1
        )
        let fallback = failed.recoverWith(on: .mainActor) { _ in
            await Task.yield()
            check()
            return Future(value: 1)
        }
        #expect(try await fallback.value() == 1)
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
