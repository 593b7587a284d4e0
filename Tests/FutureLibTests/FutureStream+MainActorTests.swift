import FutureLib
import TestSupport
import Testing

/// `on: .mainActor` on streams, and where `on:` delivers a result (`hop`, `timeout`, `zip`,
/// `Future(on:)`, `traverse`, `fold`).
@Suite(.timeLimit(.minutes(3)))
struct FutureStreamMainActorTests {
    @Test func `stream continuations on .mainActor run on the main actor, in order`() async throws {
        let log = MainActorLog()
        let promise = StreamPromise<Int>()
        let finished = Promise<Void>()
        let stream = promise.stream
        stream.onSuccess(on: .mainActor) { value in
            MainActor.assertIsolated()
            log.entries.append(value)
        }
        stream.onFailure(on: .mainActor) { error in
            MainActor.assertIsolated()
            log.errors.append(error)
        }
        stream.onFinish(on: .mainActor) {
            MainActor.assertIsolated()
            finished.fulfill(())
        }
        for value in 0..<20 { promise.fulfill(value) }
        promise.reject(SampleError())
        promise.finish()
        try await finished.future.value()
        #expect(await log.entries == Array(0..<20))
        #expect(await log.errors.count == 1)
    }

    @Test func `stream combinators on .mainActor run their closures on the main actor`() async throws {
        func check() { MainActor.assertIsolated() }
        let promise = StreamPromise<Int>()
        let mapped = promise.stream
            .map(on: .mainActor) {
                check()
                return $0 * 2
            }
            .filter(on: .mainActor) {
                check()
                return $0 > 0
            }
            .andThen(on: .mainActor) { _ in check() }
            .mapError(on: .mainActor) {
                check()
                return $0
            }
            .recover(on: .mainActor) { _ in
                check()
                return -1
            }
        let values = Locked<[Int]>([])
        let finished = Promise<Void>()
        mapped.onComplete(on: .mainActor) { result in
            check()
            values.withLock { $0.append((try? result.get()) ?? -2) }
        }
        mapped.onFinish(on: .mainActor) { finished.fulfill(()) }
        promise.fulfill(0)
        promise.fulfill(1)
        promise.reject(SampleError())
        promise.finish()
        try await finished.future.value()
        #expect(values.value == [2, -1])
    }

    @Test func `hop, timeout, zip, Future(on:), traverse and fold accept .mainActor`() async throws {
        @MainActor func isolated() -> Bool {
            MainActor.assertIsolated()
            return true
        }
        #expect(try await Future(value: 1).hop(to: .mainActor).value() == 1)
        #expect(try await Future(value: 2).timeout(after: .seconds(60), on: .mainActor).value() == 2)
        let (number, letter) = try await Future(value: 1).zip(Future(value: "a"), on: .mainActor).value()
        #expect(number == 1 && letter == "a")
        #expect(try await Future(on: .mainActor) { isolated() }.value())
        let traversed = [1, 2].traverse(on: .mainActor) { value in Future(value: isolated() ? value : 0) }
        #expect(try await traversed.value() == [1, 2])
        let total = [Future(value: 1), Future(value: 2)].fold(on: .mainActor, initial: 0) { sum, value in
            isolated() ? sum + value : 0
        }
        #expect(try await total.value() == 3)
    }
}
