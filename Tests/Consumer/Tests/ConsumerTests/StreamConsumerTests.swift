import Dispatch
import FutureLib
import Testing

/// Streams written on one thread and read on others, as a user's code would.
@Suite(.timeLimit(.minutes(Load.minutes(2))))
struct StreamConsumerTests {
    @Test func `values published on one thread reach callbacks on default and a queue, in order`() async {
        let queue = DispatchQueue(label: "consumer.stream")
        let source = StreamPromise<Payload>(capacity: 1_000)
        let sumOnDefault = Counter()
        let order = Payload()
        let inOrder = Counter()
        let finished = Counter()
        source.stream.onSuccess { payload in
            for _ in 0..<payload.value { sumOnDefault.increment() }
        }
        source.stream.onSuccess(on: queue) { payload in
            // On a serial queue in publishing order; `order` is only touched on `queue`.
            if payload.value == order.value + 1 { inOrder.increment() }
            order.value = payload.value
        }
        source.stream.onFinish(on: queue) { finished.increment() }
        await onThreads(1) { _ in
            for value in 1...200 {
                let payload = Payload()
                payload.value = value
                source.fulfill(payload)
            }
            source.finish()
        }
        #expect(await eventually { finished.value == 1 && sumOnDefault.value == 200 * 201 / 2 })
        #expect(inOrder.value == 200)
    }

    @Test func `a for await loop reads what another thread publishes`() async throws {
        let source = StreamPromise<Int>(capacity: 10)
        let doubled = source.stream.map { $0 * 2 }
        DispatchQueue.global().async {
            for value in 0..<500 { source.fulfill(value) }
            source.finish()
        }
        var received: [Int] = []
        for try await value in doubled.values(buffering: .unbounded) { received.append(value) }
        #expect(received == (0..<500).map { $0 * 2 })
    }

    @Test func `subscribers cancelled by tokens while values arrive stop cleanly`() async {
        let source = StreamPromise<Int>(capacity: 1)
        let requests = (0..<10).map { _ in CancellationRequest() }
        let calls = Counter()
        let ended = Counter()
        for request in requests {
            source.stream.onComplete(cancellationToken: request.token) { result in
                if case .failure = result { ended.increment() } else { calls.increment() }
            }
        }
        await onThreads(2) { index in
            if index == 0 {
                for value in 0..<200 { source.fulfill(value) }
                source.finish()
            } else {
                for request in requests { request.cancel() }
            }
        }
        #expect(await eventually { ended.value == 10 })
        #expect(calls.value <= 2_000)
    }

    @Test func `streams built from futures completed on many threads`() async throws {
        let source = StreamPromise<Int>(capacity: 100)
        let promises = (0..<50).map { _ in Promise<Int>() }
        let results = source.stream.flatMap { index in promises[index].future }
        await onThreads(3) { index in
            if index == 0 {
                for value in 0..<50 { source.fulfill(value) }
                source.finish()
            } else {
                for (offset, promise) in promises.enumerated() where offset % 2 == index - 1 { promise.fulfill(offset) }
            }
        }
        var received: [Int] = []
        for try await value in results.values(buffering: .unbounded) { received.append(value) }
        #expect(received.sorted() == Array(0..<50))
    }
}
