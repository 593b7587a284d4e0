import FutureLib
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
