import FutureLib
import TestSupport
import Testing

/// State that lives on the main actor, as a view model's does.
@MainActor
final class MainActorLog {
    var entries: [Int] = []
    var errors: [any Error] = []
}

/// `on: .mainActor`: continuations and combinators with `@MainActor` closures.
@Suite(.timeLimit(.minutes(3)))
struct FutureMainActorTests {
    @Test func `the main actor runs during swift test (the main queue is serviced)`() async {
        @MainActor func onMain() -> Bool {
            MainActor.assertIsolated()
            return true
        }
        #expect(await onMain())
    }

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

    @Test func `a .mainActor combinator given a cancelled token fails at once without calling its closure`() async {
        let calls = CallFlag()
        let mapped = Promise<Int>().future.map(on: .mainActor, cancellationToken: .cancelled) { value in
            calls.set()
            return value
        }
        #expect(isCancellation(mapped.result))
        #expect(!calls.isSet)
    }

    @Test func `every combinator on .mainActor runs its closure on the main actor`() async throws {
        let source = Future(value: 2)
        let failed = Future<Int>(error: SampleError())
        func check() { MainActor.assertIsolated() }
        #expect(
            try await source.map(on: .mainActor) {
                check()
                return $0 + 1
            }.value() == 3
        )
        #expect(
            try await source.flatMap(on: .mainActor) {
                check()
                return Future(value: $0 * 5)
            }.value() == 10
        )
        #expect(
            try await source.filter(on: .mainActor) {
                check()
                return $0 > 1
            }.value() == 2
        )
        #expect(
            try await failed.recover(on: .mainActor) { _ in
                check()
                return 7
            }.value() == 7
        )
        #expect(
            try await failed.recoverWith(on: .mainActor) { _ in
                check()
                return Future(value: 8)
            }.value() == 8
        )
        let transformed = source.transform(
            on: .mainActor,
            success: {
                check()
                return "\($0)"
            },
            failure: { $0 }
        )
        #expect(try await transformed.value() == "2")
        #expect(
            try await source.transform(on: .mainActor) {
                check()
                return $0.map { $0 + 4 }
            }.value() == 6
        )
        let mappedError = failed.mapError(on: .mainActor) { _ in
            check()
            return TestFailure(code: 9)
        }
        #expect(await settled(mappedError).failureEquals(TestFailure(code: 9)))
        #expect(try await source.andThen(on: .mainActor) { _ in check() }.value() == 2)
    }
}

extension Result {
    fileprivate func failureEquals<E: Error & Equatable>(_ expected: E) -> Bool {
        if case .failure(let error as E) = self { return error == expected }
        return false
    }
}
