import Dispatch
import FutureLib
import Synchronization
import Testing

// The public API of FutureLib, written as a client writes it, in Swift 6 language mode: this file
// compiling with warnings as errors is the test of names, labels, defaults, result types,
// conformances and isolation, and `make api-check` type-checks it against the public interface
// alone (it uses no `package` symbol, no TestSupport). Three parts:
// - the contract (Documentation/Guarantees.md), call by call: every combinator with `on:` and
//   `cancellationToken:` and with neither (`FutureShapesTests` runs them);
// - every form of every combinator (the table of Documentation/Futures.md, "Every form of every
//   combinator"), one line per ✓: on a context, on `.mainActor`, async, async on `.mainActor`, on
//   an actor. Nothing there runs. That no form is missing from the table, or added without its
//   row, is checked both ways by Scripts/forms.py (`make test`) against Documentation/API; these
//   lines show that overload resolution picks each form from a closure literal;
// - the Swift 6 isolation, async-closure and time shapes of the contract ("Swift 6 isolation and
//   async closures"), exactly as written there, with no `MainActor.assumeIsolated`, no
//   `@unchecked` and no `nonisolated(unsafe)` (`Swift6ShapesTests` runs them).
// CancellationShapesTests has the Cancellation API. The semantics are tested in the suites named in
// Documentation/Guarantees.md.

// MARK: - The contract, call by call

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

// MARK: - Every form of every combinator

private actor Ledger {
    var count = 0
}

@MainActor private final class Screen {
    var count = 0

    // MARK: - Futures

    func futureForms(_ future: Future<Int>, _ futures: [Future<Int>], _ ledger: Ledger, _ token: CancellationToken) {
        let context = DefaultExecutionContext()
        // onComplete, onSuccess, onFailure
        future.onComplete(on: context, cancellationToken: token) { _ in }
        future.onComplete(on: .mainActor) { _ in self.count += 1 }
        future.onComplete(on: context) { _ async in await Task.yield() }
        future.onComplete(on: .mainActor) { _ async in self.count += 1 }
        future.onComplete(on: ledger) { ledger, _ in ledger.count += 1 }
        future.onSuccess(on: context) { _ in }
        future.onSuccess(on: .mainActor) { self.count = $0 }
        future.onSuccess(on: context) { _ async in await Task.yield() }
        future.onSuccess(on: .mainActor) { value async in self.count = value }
        future.onSuccess(on: ledger) { ledger, value in ledger.count = value }
        future.onFailure(on: context, policy: .allErrors) { _ in }
        future.onFailure(on: .mainActor, policy: .allErrors) { _ in self.count += 1 }
        future.onFailure(on: context, policy: .allErrors) { _ async in await Task.yield() }
        future.onFailure(on: .mainActor, policy: .allErrors) { _ async in self.count += 1 }
        future.onFailure(on: ledger, policy: .allErrors) { ledger, _ in ledger.count += 1 }
        // map, flatMap
        _ = future.map(on: context) { $0 + 1 }
        _ = future.map(on: .mainActor) { $0 + self.count }
        _ = future.map(on: context) { value async in value + 1 }
        _ = future.map(on: .mainActor) { value async in value + self.count }
        _ = future.map(on: ledger) { ledger, value in value + ledger.count }
        _ = future.flatMap(on: context) { Future(value: $0) }
        _ = future.flatMap(on: .mainActor) { Future(value: $0 + self.count) }
        _ = future.flatMap(on: context) { value async in Future(value: value) }
        _ = future.flatMap(on: .mainActor) { value async in Future(value: value + self.count) }
        _ = future.flatMap(on: ledger) { ledger, value in Future(value: value + ledger.count) }
        // recover, recoverWith
        _ = future.recover(on: context, policy: .allErrors) { _ in 0 }
        _ = future.recover(on: .mainActor, policy: .allErrors) { _ in self.count }
        _ = future.recover(on: context, policy: .allErrors) { _ async in 0 }
        _ = future.recover(on: .mainActor, policy: .allErrors) { _ async in self.count }
        _ = future.recover(on: ledger, policy: .allErrors) { ledger, _ in ledger.count }
        _ = future.recoverWith(on: context, policy: .allErrors) { _ in Future(value: 0) }
        _ = future.recoverWith(on: .mainActor, policy: .allErrors) { _ in Future(value: self.count) }
        _ = future.recoverWith(on: context, policy: .allErrors) { _ async in Future(value: 0) }
        _ = future.recoverWith(on: .mainActor, policy: .allErrors) { _ async in Future(value: self.count) }
        _ = future.recoverWith(on: ledger, policy: .allErrors) { ledger, _ in Future(value: ledger.count) }
        // filter, transform, mapError, andThen
        _ = future.filter(on: context) { $0 > 0 }
        _ = future.filter(on: .mainActor) { $0 > self.count }
        _ = future.transform(on: context, success: { $0 + 1 }, failure: { $0 })
        _ = future.transform(on: .mainActor, success: { $0 + self.count }, failure: { $0 })
        _ = future.transform(on: context) { $0 }
        _ = future.transform(on: .mainActor) { result in result.map { $0 + self.count } }
        _ = future.mapError(on: context, policy: .allErrors) { $0 }
        _ = future.mapError(on: .mainActor, policy: .allErrors) { error in
            self.count += 1
            return error
        }
        future.andThen(on: context) { _ in }
        future.andThen(on: .mainActor) { _ in self.count += 1 }
        // ensure
        future.ensure(on: context) {}
        future.ensure(on: .mainActor) { self.count += 1 }
        future.ensure(on: context) { () async in await Task.yield() }
        future.ensure(on: .mainActor) { () async in self.count += 1 }
        // hop, timeout, zip
        _ = future.hop(to: context)
        _ = future.hop(to: .mainActor)
        _ = future.timeout(after: .seconds(1), on: context)
        _ = future.timeout(after: .seconds(1), on: .mainActor)
        _ = future.zip(Future(value: "a"), on: context)
        _ = future.zip(Future(value: "a"), on: .mainActor)
        _ = zip(future, Future(value: "a"), on: context)
        _ = zip(future, Future(value: "a"), on: .mainActor)
        // Future(on:) and Future { async }
        _ = Future(on: context) { 1 }
        _ = Future(on: .mainActor) { self.count }
        _ = Future(cancellationToken: token) { () async in 1 }
        // retry, withTimeout, race
        _ = Future<Int>.retry(maxAttempts: 2, on: context) { _ in future }
        _ = Future<Int>.retry(maxAttempts: 2, on: .mainActor) { _ in
            self.count += 1
            return future
        }
        _ = Future<Int>.withTimeout(.seconds(1), on: context) { _ in future }
        _ = Future<Int>.withTimeout(.seconds(1), on: .mainActor) { _ in
            self.count += 1
            return future
        }
        _ = Future<Int>.race(on: context, [{ _ in future }])
        _ = Future<Int>.race(
            on: .mainActor,
            [
                { @MainActor _ in
                    self.count += 1
                    return future
                }
            ]
        )
        // traverse, fold
        _ = [1, 2].traverse(on: context) { Future(value: $0) }
        _ = [1, 2].traverse(on: .mainActor) { Future(value: $0 + self.count) }
        _ = [1, 2].traverse(on: context) { value async in value }
        _ = futures.fold(on: context, initial: 0) { $0 + $1 }
        _ = futures.fold(on: .mainActor, initial: 0) { $0 + $1 + self.count }
    }

    // MARK: - Streams

    func streamForms(_ stream: FutureStream<Int>, _ future: Future<Int>, _ ledger: Ledger) {
        let context = DefaultExecutionContext()
        // onComplete, onSuccess, onFailure, onFinish
        stream.onComplete(on: context) { _ in }
        stream.onComplete(on: .mainActor) { _ in self.count += 1 }
        stream.onComplete(on: context) { _ async in await Task.yield() }
        stream.onComplete(on: .mainActor) { _ async in self.count += 1 }
        stream.onComplete(on: ledger) { ledger, _ in ledger.count += 1 }
        stream.onSuccess(on: context) { _ in }
        stream.onSuccess(on: .mainActor) { self.count = $0 }
        stream.onSuccess(on: context) { _ async in await Task.yield() }
        stream.onSuccess(on: .mainActor) { value async in self.count = value }
        stream.onSuccess(on: ledger) { ledger, value in ledger.count = value }
        stream.onFailure(on: context, policy: .allErrors) { _ in }
        stream.onFailure(on: .mainActor, policy: .allErrors) { _ in self.count += 1 }
        stream.onFailure(on: context, policy: .allErrors) { _ async in await Task.yield() }
        stream.onFailure(on: .mainActor, policy: .allErrors) { _ async in self.count += 1 }
        stream.onFailure(on: ledger, policy: .allErrors) { ledger, _ in ledger.count += 1 }
        stream.onFinish(on: context) {}
        stream.onFinish(on: .mainActor) { self.count += 1 }
        stream.onFinish(on: context) { () async in await Task.yield() }
        stream.onFinish(on: .mainActor) { () async in self.count += 1 }
        stream.onFinish(on: ledger) { ledger in ledger.count += 1 }
        // map, recover
        _ = stream.map(on: context) { $0 + 1 }
        _ = stream.map(on: .mainActor) { $0 + self.count }
        _ = stream.map(on: context) { value async in value + 1 }
        _ = stream.map(on: .mainActor) { value async in value + self.count }
        _ = stream.map(on: ledger) { ledger, value in value + ledger.count }
        _ = stream.recover(on: context, policy: .allErrors) { _ in 0 }
        _ = stream.recover(on: .mainActor, policy: .allErrors) { _ in self.count }
        _ = stream.recover(on: context, policy: .allErrors) { _ async in 0 }
        _ = stream.recover(on: .mainActor, policy: .allErrors) { _ async in self.count }
        _ = stream.recover(on: ledger, policy: .allErrors) { ledger, _ in ledger.count }
        // flatMap, recoverWith (to a future or a stream)
        _ = stream.flatMap(on: context) { Future(value: $0) }
        _ = stream.flatMap(on: .mainActor) { Future(value: $0 + self.count) }
        _ = stream.flatMap(on: context) { value -> FutureStream<Int> in FutureStream(value: value) }
        _ = stream.flatMap(on: .mainActor) { value -> FutureStream<Int> in FutureStream(value: value + self.count) }
        _ = stream.recoverWith(on: context, policy: .allErrors) { _ in Future(value: 0) }
        _ = stream.recoverWith(on: .mainActor, policy: .allErrors) { _ in Future(value: self.count) }
        _ = stream.recoverWith(on: context, policy: .allErrors) { _ -> FutureStream<Int> in FutureStream(value: 0) }
        _ = stream.recoverWith(on: .mainActor, policy: .allErrors) { _ -> FutureStream<Int> in
            FutureStream(value: self.count)
        }
        // filter, mapError, andThen
        _ = stream.filter(on: context) { $0 > 0 }
        _ = stream.filter(on: .mainActor) { $0 > self.count }
        _ = stream.filter(on: context) { value async in value > 0 }
        _ = stream.filter(on: .mainActor) { value async in value > self.count }
        _ = stream.filter(on: ledger) { ledger, value in value > ledger.count }
        _ = stream.mapError(on: context, policy: .allErrors) { $0 }
        _ = stream.mapError(on: .mainActor, policy: .allErrors) { error in
            self.count += 1
            return error
        }
        stream.andThen(on: context) { _ in }
        stream.andThen(on: .mainActor) { _ in self.count += 1 }
        // The operators that take a closure: compactMap, removeDuplicates(by:), prefix(while:), drop(while:), scan
        _ = stream.compactMap(on: context) { $0 > 0 ? $0 : nil }
        _ = stream.compactMap(on: .mainActor) { $0 > self.count ? $0 : nil }
        _ = stream.removeDuplicates(on: context) { $0 == $1 }
        _ = stream.removeDuplicates(on: .mainActor) { $0 == $1 + self.count }
        _ = stream.prefix(on: context) { $0 < 10 }
        _ = stream.prefix(on: .mainActor) { $0 < self.count }
        _ = stream.drop(on: context) { $0 < 10 }
        _ = stream.drop(on: .mainActor) { $0 < self.count }
        _ = stream.scan(0, on: context) { $0 + $1 }
        _ = stream.scan(0, on: .mainActor) { $0 + $1 + self.count }
        _ = stream.compactMap(on: context) { value async in value > 0 ? value : nil }
        _ = stream.compactMap(on: .mainActor) { value async in value > self.count ? value : nil }
        _ = stream.compactMap(on: ledger) { ledger, value in value > ledger.count ? value : nil }
        _ = stream.removeDuplicates(on: context) { previous, value async in previous == value }
        _ = stream.removeDuplicates(on: .mainActor) { previous, value async in previous == value + self.count }
        _ = stream.removeDuplicates(on: ledger) { ledger, previous, value in previous == value + ledger.count }
        _ = stream.prefix(on: context) { value async in value < 10 }
        _ = stream.prefix(on: .mainActor) { value async in value < self.count }
        _ = stream.prefix(on: ledger) { ledger, value in value < ledger.count }
        _ = stream.drop(on: context) { value async in value < 10 }
        _ = stream.drop(on: .mainActor) { value async in value < self.count }
        _ = stream.drop(on: ledger) { ledger, value in value < ledger.count }
        _ = stream.scan(0, on: context) { total, value async in total + value }
        _ = stream.scan(0, on: .mainActor) { total, value async in total + value + self.count }
        _ = stream.scan(0, on: ledger) { ledger, total, value in total + value + ledger.count }
        // reduce, contains(where:), allSatisfy: to a future
        _ = stream.reduce(0, on: context) { $0 + $1 }
        _ = stream.reduce(0, on: .mainActor) { $0 + $1 + self.count }
        _ = stream.contains(on: context) { $0 > 0 }
        _ = stream.contains(on: .mainActor) { $0 > self.count }
        _ = stream.allSatisfy(on: context) { $0 > 0 }
        _ = stream.allSatisfy(on: .mainActor) { $0 > self.count }
        _ = stream.reduce(0, on: context) { total, value async in total + value }
        _ = stream.reduce(0, on: .mainActor) { total, value async in total + value + self.count }
        _ = stream.reduce(0, on: ledger) { ledger, total, value in total + value + ledger.count }
        _ = stream.contains(on: context) { value async in value > 0 }
        _ = stream.contains(on: .mainActor) { value async in value > self.count }
        _ = stream.contains(on: ledger) { ledger, value in value > ledger.count }
        _ = stream.allSatisfy(on: context) { value async in value > 0 }
        _ = stream.allSatisfy(on: .mainActor) { value async in value > self.count }
        _ = stream.allSatisfy(on: ledger) { ledger, value in value > ledger.count }
        // flatMapLatest, to a future or a stream: the closure gets the value's own token
        _ = stream.flatMapLatest(on: context) { value, _ in Future(value: value) }
        _ = stream.flatMapLatest(on: .mainActor) { value, _ in Future(value: value + self.count) }
        _ = stream.flatMapLatest(on: context) { value, _ -> FutureStream<Int> in FutureStream(value: value) }
        _ = stream.flatMapLatest(on: .mainActor) { value, _ -> FutureStream<Int> in
            FutureStream(value: value + self.count)
        }
        // flatMapLatest with an async closure: the call is the inner work, cancelled by the next value
        _ = stream.flatMapLatest(on: context) { value, _ async in value }
        _ = stream.flatMapLatest(on: .mainActor) { value, _ async in value + self.count }
        _ = stream.flatMapLatest(on: ledger) { ledger, value, _ in value + ledger.count }
        // A future continued by a stream
        _ = future.flatMap(capacity: 1, on: context) { FutureStream(value: $0) }
        _ = future.flatMap(capacity: 1, on: .mainActor) { FutureStream(value: $0 + self.count) }
        _ = future.recoverWith(capacity: 1, on: context, policy: .allErrors) { _ in FutureStream(value: 0) }
        _ = future.recoverWith(capacity: 1, on: .mainActor, policy: .allErrors) { _ in FutureStream(value: self.count) }
    }
}

// MARK: - Swift 6 isolation, async closures and time

@MainActor final class ViewModel {
    var text = ""
    func show(_ name: Future<String>) {
        name.onSuccess(on: .mainActor) { self.text = $0 }  // runs on the main actor
        let total: Future<Int> = name.map(on: .mainActor) { self.text.count + $0.count }
        _ = total
    }
}

struct User: Sendable {
    var name: String
}

struct Profile: Sendable {
    var user: User
    var bio: String
}

@Sendable func enrich(_ user: User) async throws -> Profile {
    try await Task.sleep(for: .milliseconds(1))
    return Profile(user: user, bio: "bio of \(user.name)")
}

func profile(of user: Future<User>, cancellationToken token: CancellationToken) -> Future<Profile> {
    let profile: Future<Profile> = user.map(cancellationToken: token) { try await enrich($0) }
    return profile
}

/// Compiles only for a `Sendable` type.
private func requireSendable<T: Sendable>(_: T.Type) {}

/// "flatMap, recover, recoverWith, onSuccess/onComplete likewise accept async closures."
func asyncClosureShapes(of user: Future<User>, cancellationToken token: CancellationToken) -> [Future<Profile>] {
    let fallback = Profile(user: User(name: "none"), bio: "")
    let profile: Future<Profile> = user.map(cancellationToken: token) { try await enrich($0) }
    let flat: Future<Profile> = user.flatMap(cancellationToken: token) { Future(value: try await enrich($0)) }
    let recovered: Future<Profile> = profile.recover(cancellationToken: token) { _ in
        try await enrich(fallback.user)
    }
    let recoveredWith: Future<Profile> = profile.recoverWith(cancellationToken: token) { _ in
        Future(value: try await enrich(fallback.user))
    }
    user.onSuccess(cancellationToken: token) { _ in await Task.yield() }
    user.onComplete(cancellationToken: token) { _ in await Task.yield() }
    return [profile, flat, recovered, recoveredWith]
}

/// "Every API that waits for time (cancelAfter, cancel(after:), Future(value:after:), timeout(after:),
/// withTimeout, retry's backoff) takes `clock:`", here a `ManualClock`.
/// (A bare `Promise<Int>().future.timeout(…)` drops its promise, whose future then fails at once
/// with `brokenPromise`; here the promise is kept, so that only the clock can end the wait.)
func clockShapes(_ clock: ManualClock, pending: Promise<Int>) -> (request: CancellationRequest, futures: [Future<Int>])
{
    let request = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
    request.cancel(after: .seconds(30), clock: clock)
    let delayed: Future<Int> = Future(value: 1, after: .seconds(5), clock: clock)
    let late: Future<Int> = pending.future.timeout(after: .seconds(5), clock: clock)
    // On `.synchronous`, so that the operations have run, and armed their timers, when this returns.
    let bounded: Future<Int> = Future.withTimeout(.seconds(5), clock: clock, on: .synchronous) { _ in pending.future }
    let retried: Future<Int> = Future.retry(
        maxAttempts: 2,
        backoff: .constant(.seconds(5)),
        clock: clock,
        on: .synchronous
    ) { _ in
        Future(error: FutureError.noSuchElement)
    }
    return (request, [delayed, late, bounded, retried])
}

// 12 minutes, as `HangLimit` gives the other suites: `await clock.advanceAndSettle(by:)` returns once FutureLib's
// pool is idle in the whole process, and in a full parallel run the other suites keep it busy for as long
// as they run (Testing.md, "What `advanceAndSettle(by:)` does", says how long). The limit only bounds a hang.
@Suite(.timeLimit(.minutes(12)))
struct Swift6ShapesTests {
    @Test @MainActor func `the view model's continuation sets its text on the main actor`() async throws {
        let model = ViewModel()
        let name = Future(value: "Ada")
        model.show(name)
        // Continuations on .mainActor run in registration order: this one runs after show's.
        try await name.map(on: .mainActor) { _ in () }.value()
        #expect(model.text == "Ada")
    }

    @Test func `the async closure shapes of flatMap, recover, recoverWith, onSuccess and onComplete run`() async throws
    {
        let futures = asyncClosureShapes(of: Future(value: User(name: "Ada")), cancellationToken: .none)
        for future in futures {
            #expect(try await future.value().bio == "bio of Ada")
        }
    }

    @Test func `the time shapes take clock: and move only with the manual clock, as the contract writes them`()
        async throws
    {
        requireSendable(ManualClock.self)
        requireSendable(MainActorExecutionContext.self)
        let clock = ManualClock()
        let now: Duration = clock.now
        #expect(now == .zero)
        let pending = Promise<Int>()
        let (request, futures) = clockShapes(clock, pending: pending)
        let ranInside = Atomic(false)
        request.token.onCancel { ranInside.store(true, ordering: .relaxed) }
        #expect(futures.allSatisfy { !$0.isCompleted })  // nothing moves without the clock
        await clock.advanceAndSettle(by: .seconds(29))  // not cancelled
        #expect(!request.isCancellationRequested)
        await clock.advanceAndSettle(by: .seconds(1))  // cancelled; its handlers ran inside advanceAndSettle(by:)
        #expect(request.isCancellationRequested && ranInside.load(ordering: .relaxed))
        #expect(try await futures[0].value() == 1)
        await #expect(throws: FutureError.timeout) { try await futures[1].value() }
        await #expect(throws: FutureError.timeout) { try await futures[2].value() }
        await #expect(throws: FutureError.noSuchElement) { try await futures[3].value() }
        withExtendedLifetime(pending) {}
    }

    @Test func `the async map shape enriches the user`() async throws {
        let request = CancellationRequest()
        let result = try await profile(of: Future(value: User(name: "Ada")), cancellationToken: request.token).value()
        #expect(result.bio == "bio of Ada")
    }
}
