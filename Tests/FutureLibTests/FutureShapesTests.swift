import Dispatch
import FutureLib
import Synchronization
import Testing

// The FutureLib API of the contract (Documentation/Guarantees.md), call by call (Swift6ShapesTests
// has the Swift 6 isolation, async-closure and time shapes, CancellationShapesTests the Cancellation
// API). This file compiling with warnings as errors is the test of names, labels, defaults, result
// types and conformances: every combinator is called with `on:` and `cancellationToken:` and with
// neither. It uses no `package` symbol (no TestSupport), so it also type-checks against the public
// interface alone. The semantics are tested in the suites named in Documentation/Guarantees.md.

/// Compiles only for an `Error` that is `Equatable`.
private func requireEquatableError<E: Error & Equatable>(_: E.Type) {}

/// Compiles only because `ExecutionContext` refines `Sendable`.
private func asSendable(_ context: some ExecutionContext) -> any Sendable { context }

/// A user-written context: the protocol's one requirement, `execute(_:)`.
private struct InlineContext: ExecutionContext {
    func execute(_ work: @escaping @Sendable () -> Void) { work() }
}

private struct ShapeError: Error {}

@Suite(.timeLimit(.minutes(3)))
struct FutureShapesTests {
    @Test func `the contexts, errors and future initializers compile as the contract writes them`() async throws {
        requireEquatableError(FutureError.self)
        let errors: [FutureError] = [.noSuchElement, .timeout, .brokenPromise]
        #expect(errors.count == 3)
        let contexts: [any ExecutionContext] = [
            .synchronous, DispatchQueue(label: "FutureShapesTests"), .default,
            LimitedExecutionContext(maxConcurrency: 2),
            InlineContext(),
        ]
        _ = contexts.map { asSendable($0) }

        let token: CancellationToken = .none
        let value: Future<Int> = Future(value: 1)
        let failed: Future<Int> = Future(error: ShapeError())
        let work: Future<Int> = Future(on: .synchronous, cancellationToken: token) { 2 }
        let defaulted: Future<Int> = Future { 3 }  // on `.default`
        let asyncWork: Future<Int> = Future(cancellationToken: token) {
            await Task.yield()
            return 4
        }
        let result: Result<Int, any Error>? = work.result
        let completed: Bool = work.isCompleted
        #expect(completed && (try? result?.get()) == 2)
        let awaited: Int = try await asyncWork.value()  // the async overload in async code
        #expect(awaited == 4)
        #expect(try await defaulted.value() == 3)
        await #expect(throws: ShapeError.self) { try await failed.value() }
        #expect(try await value.value(timeout: .seconds(60)) == 1)
    }

    @Test func `the blocking calls compile as the contract writes them`() throws {
        let future = Future(value: 5)  // completed: nothing here blocks
        let value: Int = try future.value()
        let bounded: Int = try future.value(timeout: .seconds(60))
        let done: Bool = future.wait(timeout: .seconds(60))
        #expect(value == 5 && bounded == 5 && done)
    }

    @Test func `the continuations and combinators take on: and cancellationToken: as the contract writes them`()
        async throws
    {
        let token = CancellationRequest().token
        let source = Future(value: 2)
        let context = DispatchQueue(label: "FutureShapesTests.combinators")
        let seen = Atomic<Int>(0)
        source.onComplete(on: context, cancellationToken: token) { (_: Result<Int, any Error>) in
            seen.add(1, ordering: .relaxed)
        }
        source.onSuccess(on: context, cancellationToken: token) { (_: Int) in seen.add(1, ordering: .relaxed) }
        source.onFailure(on: context, cancellationToken: token) { (_: any Error) in seen.add(1, ordering: .relaxed) }
        source.onComplete { _ in }
        source.onSuccess { _ in }
        source.onFailure { _ in }

        let mapped: Future<String> = source.map(on: context, cancellationToken: token) { String($0) }
        let flat: Future<Int> = source.flatMap(on: context, cancellationToken: token) { Future(value: $0 + 1) }
        let recovered: Future<Int> = source.recover(on: context, cancellationToken: token) { _ in 0 }
        let recoveredWith: Future<Int> = source.recoverWith(on: context, cancellationToken: token) { _ in
            Future(value: 0)
        }
        let filtered: Future<Int> = source.filter(on: context, cancellationToken: token) { $0 > 0 }
        let transformed: Future<String> = source.transform(
            on: context,
            cancellationToken: token,
            success: { "\($0)" },
            failure: { $0 }
        )
        let mappedError: Future<Int> = source.mapError(on: context, cancellationToken: token) { $0 }
        let zipped: Future<(Int, String)> = source.zip(mapped, on: context, cancellationToken: token)
        let zippedThree: Future<(Int, String, Int)> = zip(source, mapped, flat)  // the free function
        let zippedTwo: Future<(Int, Int)> = zip(source, flat, on: context, cancellationToken: token)
        let limited: Future<Int> = source.timeout(after: .seconds(60), on: context, cancellationToken: token)
        let then: Future<Int> = source.andThen(on: context, cancellationToken: token) { _ in }
        source.andThen { _ in }  // used for its side effect

        let defaults: [Future<Int>] = [
            source.map { $0 }, source.flatMap { Future(value: $0) }, source.recover { _ in 0 },
            source.recoverWith { _ in Future(value: 0) }, source.filter { _ in true },
            source.transform(success: { $0 }, failure: { $0 }), source.mapError { $0 },
            source.timeout(after: .seconds(60)),
            source.andThen { _ in },
        ]
        for future in [flat, recovered, recoveredWith, filtered, mappedError, limited, then] + defaults {
            #expect(try await future.value() >= 2)
        }
        #expect(try await transformed.value() == "2")
        #expect(try await zipped.value() == (2, "2"))
        #expect(try await zippedThree.value() == (2, "2", 3))
        #expect(try await zippedTwo.value() == (2, 3))
        await withCheckedContinuation { continuation in context.async { continuation.resume() } }
        #expect(seen.load(ordering: .relaxed) == 2)  // onComplete and onSuccess; not onFailure
    }

    @Test func `the promise and sequence calls compile as the contract writes them`() async throws {
        let promise = Promise<Int>()
        let future: Future<Int> = promise.future
        promise.fulfill(1)
        promise.reject(ShapeError())  // ignored: the first resolution wins
        promise.resolve(.success(2))
        promise.resolve(with: Future(value: 3))
        let late: Bool = promise.tryFulfill(4)
        #expect(!late)
        #expect(!promise.tryReject(ShapeError()) && !promise.tryResolve(.success(5)))
        #expect(try await future.value() == 1)

        let token: CancellationToken = .none
        let traversed: Future<[Int]> = [1, 2, 3].traverse(on: .default, cancellationToken: token, maxConcurrency: 2) {
            Future(value: $0 * 10)
        }
        let unbounded: Future<[Int]> = [1, 2].traverse { Future(value: $0) }
        let futures = [Future(value: 1), Future(value: 2)]
        let all: Future<[Int]> = futures.sequence()
        let results: Future<[Result<Int, any Error>]> = futures.results()
        let folded: Future<Int> = futures.fold(initial: 10, combine: +)
        let first: Future<Int> = futures.firstCompleted()
        #expect(try await traversed.value() == [10, 20, 30])
        #expect(try await unbounded.value() == [1, 2])
        #expect(try await all.value() == [1, 2])
        #expect(try await results.value().count == 2)
        #expect(try await folded.value() == 13)
        #expect([1, 2].contains(try await first.value()))
    }
}
