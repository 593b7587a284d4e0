import FutureLib
import FutureTestSupport
import TestCombinators
import TestSupport
import Testing

/// `recover` and `recoverWith` in their forms (the context and `policy:` forms are in ErrorPolicyTests).
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureRecoverTests {}

extension FutureRecoverTests {
    /// `on: actor`: `recover` and `recoverWith` (and the `flatMap` they pair with) isolated to an actor.
    @Suite struct OnActor {
        @Test func `flatMap, recover and recoverWith on an actor run their closures isolated to it`() async throws {
            let cache = Cache()
            await cache.store("fallback", 40)
            let chained = Future(value: 1).flatMap(on: cache) { cache, value in
                cache.assertIsolated()
                return Future(value: value + (cache.values["fallback"] ?? 0))
            }
            #expect(try await chained.value() == 41)
            let recovered = Future<Int>(error: TestFailure()).recover(on: cache) { cache, _ in
                cache.assertIsolated()
                return cache.values["fallback"] ?? 0
            }
            #expect(try await recovered.value() == 40)
            let replaced = Future<Int>(error: TestFailure()).recoverWith(on: cache) { cache, _ in
                cache.assertIsolated()
                return Future(value: (cache.values["fallback"] ?? 0) + 2)
            }
            #expect(try await replaced.value() == 42)
        }

        @Test func `an actor recover leaves a source's cancellation alone by default and takes it with .allErrors`()
            async throws
        {
            let cache = Cache()
            let cancelled = Future<Int>(error: CancellationError())
            await #expect(throws: CancellationError.self) {
                try await cancelled.recover(on: cache) { _, _ in 0 }.value()
            }
            #expect(try await cancelled.recover(on: cache, policy: .allErrors) { _, _ in 7 }.value() == 7)
        }
    }
}

// MARK: - Async closures

extension FutureRecoverTests {
    /// Async closures in `recover` and `recoverWith`.
    @Suite struct AsyncClosures {
        @Test func `async recover and recoverWith give the closure's value, and pass a value on`() async throws {
            let source = Future(value: 2)
            let failed = Future<Int>(error: SampleError(code: 3))
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
        }

        @Test func `an async recover whose token is cancelled first fails at once and never starts its closure`() async
        {
            let calls = CallFlag()
            let pending = Promise<Int>()
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

        @Test(arguments: [FutureCombinator.recover, .recoverWith])
        func `every async closure form is cancelled by its token mid-await: the task sees it, a result fails at once`(
            form: FutureCombinator
        ) async throws {
            try await expectAsyncFormCancelledMidAwait(form)
        }

        @Test func `async recover and recoverWith on .mainActor run on the main actor`() async throws {
            @MainActor func check() { MainActor.assertIsolated() }
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
        }
    }
}

// MARK: - On the main actor

extension FutureRecoverTests {
    /// `on: .mainActor`: `recover` and `recoverWith` on the main actor.
    @Suite struct OnMainActor {
        @Test(arguments: [FutureCombinator.recover, .recoverWith])
        func `every combinator on .mainActor runs its closure on the main actor`(_ combinator: FutureCombinator) async {
            await expectClosureOnMainActor(combinator)
        }
    }
}
