import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct PromiseTests {
    // MARK: - Resolution

    @Test func `a new promise's future is pending`() {
        let promise = Promise<Int>()
        #expect(promise.future.result == nil)
        #expect(!promise.future.isCompleted)
    }

    @Test func `fulfill completes the future with the value`() async throws {
        let promise = Promise<Int>()
        promise.fulfill(42)
        #expect(promise.future.isCompleted)
        #expect(promise.future.result?.successValue == 42)
        #expect(try await promise.future.value() == 42)
    }

    @Test func `fulfill() completes a Void promise`() async throws {
        let started = Promise<Void>()
        started.fulfill()
        started.fulfill()  // later resolutions are ignored, as with a value
        #expect(started.future.isCompleted)
        try await started.future.value()
    }

    @Test func `reject fails the future with the error`() async {
        let promise = Promise<Int>()
        promise.reject(TestFailure(code: 7))
        #expect(promise.future.result?.testFailure == TestFailure(code: 7))
        await #expect(throws: TestFailure(code: 7)) { try await promise.future.value() }
    }

    @Test(arguments: [Result<Int, any Error>.success(3), .failure(TestFailure(code: 3))])
    func `resolve completes the future with the result`(result: Result<Int, any Error>) async {
        let promise = Promise<Int>()
        promise.resolve(result)
        let outcome = await settled(promise.future)
        #expect(outcome.successValue == result.successValue)
        #expect(outcome.testFailure == result.testFailure)
    }

    @Test func `the first resolution wins and later ones are ignored`() {
        let promise = Promise<Int>()
        promise.fulfill(1)
        promise.fulfill(2)
        promise.reject(TestFailure())
        promise.resolve(.success(3))
        promise.resolve(with: Future(value: 4))
        #expect(promise.future.result?.successValue == 1)
    }

    @Test func `a rejection that came first wins over a later fulfil`() {
        let promise = Promise<Int>()
        promise.reject(TestFailure(code: 2))
        promise.fulfill(1)
        #expect(promise.future.result?.testFailure == TestFailure(code: 2))
    }

    @Test func `the try forms report whether they completed the future`() {
        let promise = Promise<Int>()
        #expect(promise.tryFulfill(1))
        #expect(!promise.tryFulfill(2))
        #expect(!promise.tryReject(TestFailure()))
        #expect(!promise.tryResolve(.success(3)))
        #expect(promise.future.result?.successValue == 1)

        let rejected = Promise<Int>()
        #expect(rejected.tryReject(TestFailure()))
        #expect(!rejected.tryFulfill(1))

        let resolved = Promise<Int>()
        #expect(resolved.tryResolve(.failure(TestFailure(code: 5))))
        #expect(!resolved.tryResolve(.success(1)))
        #expect(resolved.future.result?.testFailure == TestFailure(code: 5))
    }

    @Test func `resolving twice runs each continuation only once`() async {
        let promise = Promise<Int>()
        await confirmation(expectedCount: 1) { ran in
            promise.future.onComplete(on: .synchronous) { _ in ran() }
            promise.fulfill(1)
            promise.fulfill(2)
            promise.reject(TestFailure())
        }
    }

    // MARK: - resolve(with:)

    @Test func `resolve(with:) forwards the value of a future that completes later`() async throws {
        let source = Promise<Int>()
        let promise = Promise<Int>()
        promise.resolve(with: source.future)
        #expect(!promise.future.isCompleted)
        source.fulfill(9)
        #expect(try await promise.future.value() == 9)
    }

    @Test func `resolve(with:) forwards the error of a failed future`() async {
        let promise = Promise<Int>()
        promise.resolve(with: Future(error: TestFailure(code: 4)))
        #expect(await settled(promise.future).testFailure == TestFailure(code: 4))
    }

    @Test func `resolve(with:) keeps the promise from breaking while the other future is pending`() async throws {
        let source = Promise<Int>()
        var promise: Promise<Int>? = Promise<Int>()
        let future = promise!.future
        promise!.resolve(with: source.future)
        promise = nil
        #expect(!future.isCompleted)  // not broken: the pending source still holds the promise
        source.fulfill(11)
        #expect(try await future.value() == 11)
    }

    @Test func `resolve(with:) loses to a resolution that came first`() async throws {
        let source = Promise<Int>()
        let promise = Promise<Int>()
        promise.resolve(with: source.future)
        #expect(promise.tryFulfill(1))
        source.fulfill(2)
        #expect(try await promise.future.value() == 1)
    }

    @Test func `resolve(with:) a broken promise's future fails with brokenPromise`() async {
        let promise = Promise<Int>()
        promise.resolve(with: Promise<Int>().future)
        #expect(await settled(promise.future).futureError == .brokenPromise)
    }

    // MARK: - Broken promises

    @Test func `a promise deallocated unresolved fails its future with brokenPromise`() async {
        var promise: Promise<Int>? = Promise<Int>()
        let future = promise!.future
        #expect(!future.isCompleted)
        promise = nil
        #expect(future.result?.futureError == .brokenPromise)
        await #expect(throws: FutureError.brokenPromise) { try await future.value() }
    }

    @Test func `a dropped promise runs the pending continuations with brokenPromise`() async {
        var promise: Promise<Int>? = Promise<Int>()
        let future = promise!.future
        await confirmation(expectedCount: 1) { failed in
            future.onFailure(on: .synchronous) { error in
                if error as? FutureError == .brokenPromise { failed() }
            }
            promise = nil
        }
    }

    @Test func `a promise deallocated after resolving keeps its result`() {
        var promise: Promise<Int>? = Promise<Int>()
        let future = promise!.future
        promise!.fulfill(5)
        promise = nil
        #expect(future.result?.successValue == 5)
    }
}
