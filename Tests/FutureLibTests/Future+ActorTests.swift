import FutureLib
import TestSupport
import Testing

/// The `actor Cache` of the docs: its own methods consume futures with continuations isolated to it.
private actor Cache {
    var values: [String: Int] = [:]
    var errors: [any Error] = []
    let filled = Promise<Void>()

    func load(_ key: String, from future: Future<Int>, cancellationToken: CancellationToken = .none) {
        future.onSuccess(on: self, cancellationToken: cancellationToken) { cache, value in
            cache.assertIsolated()
            cache.values[key] = value  // synchronous access: the closure is isolated to the actor
            cache.filled.fulfill(())
        }
        future.onFailure(on: self, cancellationToken: cancellationToken) { cache, error in
            cache.assertIsolated()
            cache.errors.append(error)
            cache.filled.fulfill(())
        }
    }

    func store(_ key: String, _ value: Int) { values[key] = value }

    func doubled(_ future: Future<Int>) -> Future<Int> {
        future.map(on: self) { cache, value in
            cache.assertIsolated()
            return value * 2 + cache.values.count
        }
    }

    func result(of future: Future<Int>) -> Future<String> {
        let done = Promise<String>()
        future.onComplete(on: self) { cache, result in
            cache.assertIsolated()
            done.fulfill((try? "\(result.get())") ?? "failed")
        }
        return done.future
    }
}

@Suite(.timeLimit(.minutes(3)))
struct FutureActorTests {
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
        await #expect(throws: CancellationError.self) { try await cancelled.recover(on: cache) { _, _ in 0 }.value() }
        #expect(try await cancelled.recover(on: cache, policy: .allErrors) { _, _ in 7 }.value() == 7)
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
