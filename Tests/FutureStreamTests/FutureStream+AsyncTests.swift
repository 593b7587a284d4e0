import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamAsyncTests {
    // MARK: - values and results

    @Test func `for await gets the kept results, then the new ones, and ends when the stream finishes`() async throws {
        let promise = StreamPromise<Int>(capacity: 2)
        for value in 1...3 { promise.fulfill(value) }
        let producer = Task {
            await onDedicatedThread {
                for value in 4...100 { promise.fulfill(value) }
                promise.finish()
            }
        }
        var seen: [Int] = []
        for try await value in promise.stream.values(buffering: .unbounded) { seen.append(value) }
        await producer.value
        #expect(seen.first == 2)
        #expect(seen == Array(2...100))
    }

    @Test func `an error ends the values loop by throwing`() async {
        let promise = StreamPromise<Int>(capacity: 5)
        promise.fulfill(1)
        promise.reject(TestFailure(code: 4))
        promise.fulfill(2)
        var seen: [Int] = []
        await #expect(throws: TestFailure(code: 4)) {
            for try await value in promise.stream.values { seen.append(value) }
        }
        #expect(seen == [1])
    }

    @Test func `results go on after errors`() async {
        let promise = StreamPromise<Int>(capacity: 5)
        promise.fulfill(1)
        promise.reject(TestFailure())
        promise.fulfill(2)
        promise.finish()
        var count = 0
        for await result in promise.stream.results {
            count += 1
            if count == 2 { #expect(result.testFailure != nil) }
        }
        #expect(count == 3)
    }

    @Test func `cancelling the task ends the loop and unsubscribes`() async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        let started = Promise<Void>()
        let loop = Task {
            var seen: [Int] = []
            for try await value in promise.stream.values {
                seen.append(value)
                if value == 1 { started.fulfill(()) }
            }
            return seen
        }
        #expect(await eventually { promise.stream.subscriberCount == 1 })
        promise.fulfill(1)
        try await started.future.value()
        loop.cancel()
        let seen = try await loop.value
        #expect(seen == [1])
        #expect(await eventually { promise.stream.subscriberCount == 0 })
    }

    @Test func `breaking out of the loop unsubscribes`() async throws {
        let promise = StreamPromise<Int>(capacity: 5)
        for value in 1...3 { promise.fulfill(value) }
        for try await value in promise.stream.values where value == 2 { break }
        #expect(await eventually { promise.stream.subscriberCount == 0 })
    }

    @Test func `a task cancelled before the loop starts ends it at once`() async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        let loop = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var count = 0
            for try await _ in promise.stream.values { count += 1 }
            return count
        }
        #expect(try await loop.value == 0)
    }

    @Test func `a cancelled task's loop ends at once even with results buffered`() async throws {
        let promise = StreamPromise<Int>(capacity: 5)
        for value in 0..<3 { promise.fulfill(value) }
        let loop = Task {
            var iterator = promise.stream.values.makeAsyncIterator()  // holds the 3 kept results
            let first = try await iterator.next()
            withUnsafeCurrentTask { $0?.cancel() }
            let afterCancel = try await iterator.next()
            return (first, afterCancel)
        }
        let (first, afterCancel) = try await loop.value
        #expect(first == 0)
        #expect(afterCancel == nil)
    }

    @Test func `bufferingNewest drops the oldest results of a loop that is behind`() async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        var iterator = promise.stream.values(buffering: .bufferingNewest(2)).makeAsyncIterator()
        for value in 1...5 { promise.fulfill(value) }
        promise.finish()
        var seen: [Int] = []
        while let value = try await iterator.next() { seen.append(value) }
        #expect(seen == [4, 5])
    }

    @Test func `bufferingOldest drops new results while the buffer is full`() async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        var iterator = promise.stream.values(buffering: .bufferingOldest(2)).makeAsyncIterator()
        for value in 1...5 { promise.fulfill(value) }
        promise.finish()
        var seen: [Int] = []
        while let value = try await iterator.next() { seen.append(value) }
        #expect(seen == [1, 2])
    }

    @Test func `values buffers the newest capacity results by default`() async throws {
        let promise = StreamPromise<Int>(capacity: 3)
        var iterator = promise.stream.values.makeAsyncIterator()
        for value in 1...10 { promise.fulfill(value) }
        promise.finish()
        var seen: [Int] = []
        while let value = try await iterator.next() { seen.append(value) }
        #expect(seen == [8, 9, 10])
    }

    // MARK: - From an AsyncSequence

    @Test func `a stream from an AsyncSequence gets its elements and finishes at its end`() async {
        let (elements, continuation) = AsyncStream.makeStream(of: Int.self)
        let stream = FutureStream(capacity: .max, elements)
        for value in 0..<50 { continuation.yield(value) }
        continuation.finish()
        await stream.finished()
        #expect(StreamRecorder<Int>().record(stream).values == Array(0..<50))
    }

    @Test func `an error of the AsyncSequence is the last result`() async {
        let (elements, continuation) = AsyncThrowingStream.makeStream(of: Int.self)
        let stream = FutureStream(capacity: 5, elements)
        continuation.yield(1)
        continuation.finish(throwing: TestFailure(code: 6))
        await stream.finished()
        let recorder = StreamRecorder<Int>().record(stream)
        #expect(recorder.values == [1])
        #expect(recorder.errors.compactMap { ($0 as? TestFailure)?.code } == [6])
    }

    @Test func `the token stops the iteration and finishes the stream with CancellationError`() async {
        let (elements, continuation) = AsyncStream.makeStream(of: Int.self)
        let ended = Promise<Void>()
        continuation.onTermination = { _ in ended.fulfill(()) }
        let request = CancellationRequest()
        let stream = FutureStream(capacity: 5, cancellationToken: request.token, elements)
        continuation.yield(1)
        request.cancel()
        #expect(stream.isFinished)
        _ = try? await ended.future.value()  // the task was cancelled and let go of the sequence
        let recorder = StreamRecorder<Int>().record(stream)
        #expect(recorder.errors.last is CancellationError)
    }

    @Test func `a round trip through values keeps every element`() async throws {
        let promise = StreamPromise<Int>(capacity: .max)
        for value in 0..<20 { promise.fulfill(value) }
        promise.finish()
        let copy = FutureStream(capacity: .max, promise.stream.values)
        await copy.finished()
        #expect(StreamRecorder<Int>().record(copy).values == Array(0..<20))
    }
}
