import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// The stream continuations' async and actor forms (the synchronous ones are in FutureStreamTests).
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamCallbacksTests {
    @Test func `async continuations get every result one call at a time, in order, then the end`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let values = Locked<[Int]>([])
        let errors = Locked<[any Error]>([])
        let probe = OverlapProbe()
        let finished = Promise<Void>()
        promise.stream.onSuccess { value in
            await probe.yieldInside()
            values.withLock { $0.append(value) }
        }
        promise.stream.onFailure { error in
            await Task.yield()
            errors.withLock { $0.append(error) }
        }
        promise.stream.onFinish {
            await Task.yield()
            finished.fulfill(())
        }
        let completed = Locked<[Int]>([])
        let completedAll = Promise<Void>()
        promise.stream.onComplete { result in
            await Task.yield()
            completed.withLock { $0.append((try? result.get()) ?? -1) }
            if completed.value.count == 22 { completedAll.fulfill(()) }
        }
        for value in 0..<20 { promise.fulfill(value) }
        promise.reject(TestFailure(code: 1))
        promise.reject(CancellationError())  // skipped by onFailure's default policy
        promise.finish()
        _ = try? await finished.future.value()
        _ = try? await completedAll.future.value()
        await waitUntil { values.value.count == 20 && errors.value.count == 1 }
        #expect(values.value == Array(0..<20))
        #expect(probe.overlaps == 0)
        #expect(errors.value.count == 1 && errors.value.first is TestFailure)
        #expect(completed.value == Array(0..<20) + [-1, -1])
    }

    @Test func `an async continuation's token: results not yet delivered are dropped, then one CancellationError`()
        async
    {
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let gate = Promise<Void>()
        let seen = Locked<[Int]>([])
        let done = Promise<Void>()
        promise.stream.onComplete(cancellationToken: request.token) { result in
            switch result {
            case .success(let value):
                seen.withLock { $0.append(value) }
                _ = try? await gate.future.value()
            case .failure(let error):
                seen.withLock { $0.append(error is CancellationError ? -1 : -2) }
                done.fulfill(())
            }
        }
        promise.fulfill(1)
        promise.fulfill(2)
        await waitUntil { seen.value == [1] }
        request.cancel()
        gate.fulfill(())
        _ = try? await done.future.value()
        #expect(seen.value == [1, -1])
    }

    actor Tally {
        var values: [Int] = []
        var isDone = false
        func append(_ value: Int) { values.append(value) }
    }

    @Test func `continuations on an actor are isolated to it, in order`() async {
        let tally = Tally()
        let promise = StreamPromise<Int>(capacity: 0)
        let finished = Promise<Void>()
        promise.stream.onSuccess(on: tally) { tally, value in tally.values.append(value) }
        promise.stream.onFinish(on: tally) { tally in
            tally.isDone = true
            finished.fulfill(())
        }
        for value in 0..<20 { promise.fulfill(value) }
        promise.finish()
        _ = try? await finished.future.value()
        await waitUntil { await tally.values.count == 20 }
        #expect(await tally.values == Array(0..<20))
        #expect(await tally.isDone)
    }

    @Test func `async continuations on .mainActor run on the main actor`() async {
        let promise = StreamPromise<Int>(capacity: 0)
        let finished = Promise<Void>()
        let values = Locked<[Int]>([])
        promise.stream.onSuccess(on: .mainActor) { value in
            MainActor.assertIsolated()
            await Task.yield()
            values.withLock { $0.append(value) }
        }
        promise.stream.onFinish(on: .mainActor) {
            MainActor.assertIsolated()
            await Task.yield()
            finished.fulfill(())
        }
        for value in 0..<5 { promise.fulfill(value) }
        promise.finish()
        _ = try? await finished.future.value()
        await waitUntil { values.value.count == 5 }
        #expect(values.value == Array(0..<5))
    }
}

extension FutureStreamCallbacksTests {
    /// `on: .mainActor`: stream continuations on the main actor.
    @Suite struct OnMainActor {
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
    }
}
