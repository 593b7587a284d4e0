import FutureLib
import Synchronization
import TestSupport
import Testing

/// The forms (async closures, `on: .mainActor`) checked across every combinator family at once. A test
/// of one family's form lives in that family's file, in a nested suite per form (`FutureMapTests.OnActor`).
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FormsTests {}

extension FormsTests {
    /// Async closures across the families: which form a closure picks, values and errors, cancellation, where the task runs.
    @Suite struct AsyncClosures {
        @Test
        func `a closure with no await picks the synchronous form; one that awaits, or says async, the async form`()
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
}

extension FormsTests {
    /// `on: .mainActor` across the future families.
    @Suite struct OnMainActor {
        @Test func `the main actor runs during swift test (the main queue is serviced)`() async {
            @MainActor func onMain() -> Bool {
                MainActor.assertIsolated()
                return true
            }
            #expect(await onMain())
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
}

extension FormsTests {
    /// `on: .mainActor` across the stream families, and where `on:` delivers a result (`hop`, `timeout`, `zip`, `Future(on:)`, `traverse`, `fold`).
    @Suite struct StreamsOnMainActor {
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
}
