import FutureLib
import FutureTestSupport
import TestCombinators
import TestSupport
import Testing

/// Main-actor state the `.mainActor` operations (`retry`, `withTimeout`, `race`) touch without a hop.
@MainActor final class Attempts {
    var count = 0
    var names: [String] = []
}

/// Whether the caller runs inside a Swift task: the synchronous forms do not, the async ones do.
func inTask() -> Bool {
    withUnsafeCurrentTask { $0 != nil }
}

/// The `actor Cache` of the docs: its own methods consume futures with continuations isolated to it.
actor Cache {
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

extension Result {
    func failureEquals<E: Error & Equatable>(_ expected: E) -> Bool {
        if case .failure(let error as E) = self { return error == expected }
        return false
    }
}

// MARK: - One form across a family

/// Checks `combinator`'s `.mainActor` form: its closure runs once, on the main actor, and the
/// result is the one its context form gives (a value source of 2, or a `SampleError`).
func expectClosureOnMainActor(_ combinator: FutureCombinator) async {
    let calls = CallFlag()
    let source = combinator.handlesErrors ? Future<Int>(error: SampleError()) : Future(value: 2)
    let future = combinator.apply(to: source, on: .mainActor) {
        MainActor.assertIsolated()
        calls.set()
    }
    #expect(future != nil, "\(combinator) has no .mainActor form")
    guard let future else { return }
    let outcome = await awaitOutcome(future)
    if combinator == .mapError {
        #expect(outcome.failureEquals(SampleError()))
    } else {
        #expect(outcome.successValue == (combinator.handlesErrors ? -1 : 2 + combinator.increment))
    }
    #expect(calls.count == 1)
}

/// Checks `form`'s async closure form against a token cancelled mid-await: the task sees the
/// cancellation, and a result (a continuation has none) fails with `CancellationError` at once.
func expectAsyncFormCancelledMidAwait(_ form: FutureCombinator) async throws {
    #expect(FutureCombinator.asyncForms.contains(form))
    let request = CancellationRequest()
    let started = Promise<Void>()
    let sawCancellation = Promise<Bool>()
    let source = form.handlesErrors ? Future<Int>(error: SampleError()) : Future(value: 1)
    let result = form.applyAsync(to: source, cancellationToken: request.token) {
        started.fulfill(())
        try? await Task.sleep(for: .seconds(600))
        sawCancellation.fulfill(Task.isCancelled)
    }
    try await started.future.value()
    #expect(result?.isCompleted != true)
    request.cancel()
    if let result { #expect(isCancellation(result.result)) }  // at once: before the task noticed
    #expect(try await sawCancellation.future.value())
}
