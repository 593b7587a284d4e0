import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureZipTests {
    @Test("zip and timeout(after:) complete their future on the context given as on:")
    func completesOnContext() async throws {
        let probed = ProbedQueue()
        let a = Promise<Int>()
        let b = Promise<String>()
        let onQueue = Locked<[Bool]>([])
        let zipped = zip(a.future, b.future, on: probed.queue)
        let limited = a.future.timeout(after: .seconds(3600), on: probed.queue)
        // `.synchronous` continuations run on the thread that completes the future.
        zipped.onComplete(on: .synchronous) { _ in onQueue.withLock { $0.append(probed.isCurrent) } }
        limited.onComplete(on: .synchronous) { _ in onQueue.withLock { $0.append(probed.isCurrent) } }
        a.fulfill(1)
        b.fulfill("one")
        let pair = try await zipped.value()
        #expect(pair.0 == 1 && pair.1 == "one")
        #expect(try await limited.value() == 1)
        #expect(await eventually { onQueue.value.count == 2 })
        #expect(onQueue.value == [true, true])
    }

    @Test("zip of two futures of different types gives both values in argument order")
    func zipTwo() async throws {
        let pair = try await zip(Future(value: 1), Future(value: "one")).value()
        #expect(pair.0 == 1)
        #expect(pair.1 == "one")
        let method = try await Future(value: 2).zip(Future(value: "two")).value()
        #expect(method.0 == 2 && method.1 == "two")
    }

    @Test("zip of three futures of mixed types, completed out of order")
    func zipThreeOutOfOrder() async throws {
        let a = Promise<Int>()
        let b = Promise<String>()
        let c = Promise<Double>()
        let zipped = zip(a.future, b.future, c.future)
        c.fulfill(2.5)
        a.fulfill(1)
        #expect(!zipped.isCompleted)
        b.fulfill("b")
        let (x, y, z) = try await zipped.value()
        #expect(x == 1 && y == "b" && z == 2.5)
    }

    @Test("zip of six futures of mixed types")
    func zipSix() async throws {
        let values = try await Future(value: 1).zip(
            Future(value: "2"),
            Future(value: 3.0),
            Future(value: [4]),
            Future(value: Optional(5)),
            Future { true }
        ).value()
        #expect(values.0 == 1 && values.1 == "2" && values.2 == 3.0)
        #expect(values.3 == [4] && values.4 == 5 && values.5)
    }

    @Test("zip fails with the first failure in time without waiting for the others")
    func zipFailsFast() async {
        let pending = Promise<Int>()
        let failing = Promise<String>()
        let zipped = zip(pending.future, failing.future, Future(value: 3))
        failing.reject(SampleError(code: 4))
        // Completed although `pending` never completes.
        await #expect(throws: SampleError(code: 4)) { try await zipped.value() }
        // First in time, not first in argument order: the last argument fails before the second.
        let second = Promise<Int>()
        let last = Promise<Int>()
        let ordered = zip(pending.future, second.future, last.future)
        last.reject(SampleError(code: 3))
        second.reject(SampleError(code: 2))
        await #expect(throws: SampleError(code: 3)) { try await ordered.value() }
        withExtendedLifetime(pending) {}
    }

    @Test("zip with a cancelled token fails with CancellationError promptly")
    func zipCancelled() async {
        let pending = Promise<Int>()
        let request = CancellationRequest()
        let zipped = zip(pending.future, Future(value: 1), cancellationToken: request.token)
        #expect(!zipped.isCompleted)
        request.cancel()
        #expect(isCancellation(zipped.result))
        let already = Future(value: 1).zip(Future(value: 2), cancellationToken: .cancelled)
        #expect(isCancellation(already.result))
        withExtendedLifetime(pending) {}
    }
}

extension FutureZipTests {
    /// `on: .mainActor`: the free `zip` completes on the main actor.
    @Suite struct OnMainActor {
        @Test func `the free zip on .mainActor completes on the main actor`() async throws {
            let name = Promise<String>()
            let age = Promise<Int>()
            let zipped = zip(name.future, age.future, on: .mainActor)
            let delivered = Promise<Bool>()
            zipped.onComplete(on: .synchronous) { _ in
                // Registered before completion: runs on the thread that completes `zipped`.
                MainActor.assertIsolated()
                delivered.fulfill(true)
            }
            name.fulfill("Ada")
            age.fulfill(36)
            let (text, number) = try await zipped.value()
            #expect(text == "Ada" && number == 36)
            #expect(try await delivered.future.value())
        }
    }
}

extension FutureZipTests.OnMainActor {
    @Test func `the zip method accepts .mainActor`() async throws {
        let (number, letter) = try await Future(value: 1).zip(Future(value: "a"), on: .mainActor).value()
        #expect(number == 1 && letter == "a")
    }
}
