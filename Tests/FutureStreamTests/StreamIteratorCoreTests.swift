import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// The loop's side of `for await` over a stream: with a policy that never drops a result, `next()`
/// takes everything buffered in one trip through the lock and serves it from a batch of its own.
/// These tests pin what that batch must not change: order, exactly once, the end after the last
/// value, errors, and a cancelled task or a dropped iterator ending the loop at once.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct StreamIteratorCoreTests {
    // MARK: - Order and exactly once

    @Test func `values published in bursts from another thread arrive in order, each once`() async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        var iterator = promise.stream.values(buffering: .unbounded).makeAsyncIterator()
        let producer = Task {
            await onDedicatedThread {
                for burst in 0..<100 {
                    for offset in 0..<100 { promise.fulfill(burst * 100 + offset) }
                    if burst.isMultiple(of: 10) { pause(.milliseconds(1)) }  // the loop catches up and waits
                }
                promise.finish()
            }
        }
        var seen: [Int] = []
        while let value = try await iterator.next() { seen.append(value) }
        await producer.value
        #expect(seen == Array(0..<10_000))
    }

    @Test func `a stream that keeps everything serves its default values loop in batches, losing nothing`() async throws
    {
        let promise = StreamPromise<Int>()  // `values` buffers the newest Int.max: never drops
        for value in 0..<10 { promise.fulfill(value) }
        var iterator = promise.stream.values.makeAsyncIterator()
        #expect(try await iterator.next() == 0)  // takes 0..<10 at once
        for value in 10..<20 { promise.fulfill(value) }
        promise.finish()
        var seen = [0]
        while let value = try await iterator.next() { seen.append(value) }
        #expect(seen == Array(0..<20))
    }

    @Test(arguments: 0..<20)
    func `concurrent producers and one loop: each value once, each producer's in order`(round: Int) async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        var iterator = promise.stream.values(buffering: .unbounded).makeAsyncIterator()
        let producers = Task {
            await onThreads(3) { producer in
                for offset in 0..<2_000 { promise.fulfill(producer * 10_000 + offset) }
            }
            promise.finish()
        }
        var seen: [Int] = []
        while let value = try await iterator.next() { seen.append(value) }
        await producers.value
        #expect(seen.count == 6_000)
        #expect(Set(seen).count == 6_000)
        for producer in 0..<3 {
            let own = seen.filter { $0 / 10_000 == producer }
            #expect(own == Array(producer * 10_000..<producer * 10_000 + 2_000))
        }
    }

    @Test func `two loops over one stream each get every value, in order`() async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        let subscribed = (Promise<Void>(), Promise<Void>())
        func loop(_ subscribed: Promise<Void>) -> Task<[Int], any Error> {
            Task {
                var iterator = promise.stream.values(buffering: .unbounded).makeAsyncIterator()
                subscribed.fulfill(())
                var seen: [Int] = []
                while let value = try await iterator.next() { seen.append(value) }
                return seen
            }
        }
        let loops = (loop(subscribed.0), loop(subscribed.1))
        try await subscribed.0.future.value()
        try await subscribed.1.future.value()
        await onDedicatedThread {
            for value in 0..<5_000 { promise.fulfill(value) }
            promise.finish()
        }
        #expect(try await loops.0.value == Array(0..<5_000))
        #expect(try await loops.1.value == Array(0..<5_000))
    }

    // MARK: - The end and errors

    @Test func `finishing while values wait in the loop's batch delivers them, then the end`() async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        var iterator = promise.stream.values(buffering: .unbounded).makeAsyncIterator()
        for value in 1...3 { promise.fulfill(value) }
        #expect(try await iterator.next() == 1)  // 2 and 3 are in the batch now
        for value in 4...5 { promise.fulfill(value) }
        promise.finish()
        var rest: [Int] = []
        while let value = try await iterator.next() { rest.append(value) }
        #expect(rest == [2, 3, 4, 5])
        #expect(try await iterator.next() == nil)
    }

    @Test func `an error in the batch is thrown in its place and ends the values loop`() async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        var iterator = promise.stream.values(buffering: .unbounded).makeAsyncIterator()
        promise.fulfill(1)
        promise.reject(TestFailure(code: 7))
        promise.fulfill(2)
        #expect(try await iterator.next() == 1)
        await #expect(throws: TestFailure(code: 7)) { try await iterator.next() }
        promise.fulfill(3)
        #expect(try await iterator.next() == nil)  // the batched 2 is dropped, 3 never arrives
        #expect(await eventually { promise.stream.subscriberCount == 0 })
    }

    @Test func `results go on past an error in the batch`() async {
        let promise = StreamPromise<Int>()  // `results` buffers the newest Int.max: batches
        var iterator = promise.stream.results.makeAsyncIterator()
        promise.fulfill(1)
        promise.reject(TestFailure(code: 8))
        promise.fulfill(2)
        promise.finish()
        var seen: [String] = []
        while let result = await iterator.next() {
            switch result {
            case .success(let value): seen.append("\(value)")
            case .failure(let error): seen.append("error \((error as? TestFailure)?.code ?? -1)")
            }
        }
        #expect(seen == ["1", "error 8", "2"])
    }

    // MARK: - Cancellation and dropping the iterator

    @Test func `cancelling the task while values wait in the loop's batch ends the loop at once`() async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        let loop = Task {
            var iterator = promise.stream.values(buffering: .unbounded).makeAsyncIterator()
            for value in 0..<5 { promise.fulfill(value) }
            let first = try await iterator.next()  // 1..<5 are in the batch now
            withUnsafeCurrentTask { $0?.cancel() }
            let afterCancel = try await iterator.next()
            let later = try await iterator.next()
            return (first, afterCancel, later)
        }
        let (first, afterCancel, later) = try await loop.value
        #expect(first == 0)
        #expect(afterCancel == nil)
        #expect(later == nil)
        #expect(await eventually { promise.stream.subscriberCount == 0 })
    }

    @Test func `cancelling the task while the loop waits ends it with nil and unsubscribes`() async throws {
        let promise = StreamPromise<Int>(capacity: 0)
        let received = Promise<Void>()
        let loop = Task {
            var seen: [Int] = []
            for try await value in promise.stream.values(buffering: .unbounded) {
                seen.append(value)
                if value == 2 { received.fulfill(()) }
            }
            return seen
        }
        #expect(await eventually { promise.stream.subscriberCount == 1 })
        promise.fulfill(1)
        promise.fulfill(2)
        try await received.future.value()  // the loop has 1 and 2 and waits for more
        loop.cancel()
        let seen = try await loop.value
        promise.fulfill(3)
        #expect(seen == [1, 2])
        #expect(await eventually { promise.stream.subscriberCount == 0 })
    }

    @Test func `dropping the iterator with values in its batch unsubscribes and releases them`() async throws {
        let promise = StreamPromise<Tracked>(capacity: 0)
        let counter = DeinitCounter()
        do {
            var iterator = promise.stream.values(buffering: .unbounded).makeAsyncIterator()
            for _ in 0..<5 { promise.fulfill(counter.make()) }
            _ = try await iterator.next()  // the other four are in the batch
        }
        #expect(await eventually { promise.stream.subscriberCount == 0 })
        #expect(await eventually { counter.deallocated == 5 })
    }

    // MARK: - Races (Stress.heavy rounds; `FUTURELIB_STRESS_ITERATIONS` raises them)

    /// With a bounded policy the loop takes one result per trip, and results it has not taken are
    /// dropped by the policy while the producer runs on: what it sees is an increasing
    /// subsequence, each value once, then the end; the newest policy always keeps the last value,
    /// the oldest one the first.
    @Test(arguments: [
        FutureStream<Int>.BufferingPolicy.bufferingNewest(1), .bufferingNewest(3), .bufferingOldest(1),
        .bufferingOldest(3),
    ])
    func `a bounded loop racing its producer sees an increasing subsequence, then the end`(
        policy: FutureStream<Int>.BufferingPolicy
    ) async throws {
        var failures: [String] = []
        for round in 0..<max(Stress.heavy / 10, 50) where failures.count < 10 {
            let promise = StreamPromise<Int>(capacity: 0)
            var iterator = promise.stream.values(buffering: policy).makeAsyncIterator()
            let producer = Task {
                await onDedicatedThread {
                    for value in 0..<100 {
                        promise.fulfill(value)
                        if value % 10 == round % 10 { pause(.microseconds(5)) }  // the loop catches up
                    }
                    promise.finish()
                }
            }
            var seen: [Int] = []
            while let value = try await iterator.next() { seen.append(value) }
            await producer.value
            let keepsLast = if case .bufferingNewest = policy { true } else { false }
            if seen.isEmpty || zip(seen, seen.dropFirst()).contains(where: { $0 >= $1 }) {
                failures.append("round \(round): \(seen) is not increasing")
            } else if keepsLast ? seen.last != 99 : seen.first != 0 {
                failures.append("round \(round): \(seen) lost the value its policy keeps")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// The loop's task is cancelled from one thread while another publishes and finishes: the
    /// loop ends either way (its continuation resumed once, by whichever came first), with a
    /// gapless run of values, and leaves no subscription behind.
    @Test func `cancelling a loop racing values and the end: it ends, gapless, and unsubscribes`() async {
        final class Round: Sendable {
            let promise = StreamPromise<Int>(capacity: 0)
            let seen = Locked<[Int]>([])
            let ended = Signal()
            let loop: Task<Void, Never>

            init() {
                let (values, seen, ended) = (promise.stream.values(buffering: .unbounded), seen, ended)
                // Off the cooperative pool: `check` blocks on its end while the race holds `HeavyGate`.
                loop = Task(executorPreference: DedicatedTaskExecutor.shared) {
                    do {
                        for try await value in values { seen.withLock { $0.append(value) } }
                    } catch {
                        seen.withLock { $0.append(-1) }  // never: the stream publishes no error
                    }
                    ended.fire()
                }
            }
        }
        let failures = await race(
            iterations: Stress.heavy,
            setup: { Round() },
            actions: [
                { round in
                    for value in 0..<50 { round.promise.fulfill(value) }
                    round.promise.finish()
                },
                { round in
                    for _ in 0..<Int.random(in: 0..<200) { _ = round.promise.stream.subscriberCount }
                    round.loop.cancel()
                },
            ],
            check: { round in
                guard round.ended.wait() else { return "the loop never ended" }
                let seen = round.seen.value
                if let first = seen.first, seen != Array(first..<first + seen.count) {
                    return "\(seen) is not a gapless run"
                }
                _ = blockUntil { round.promise.stream.subscriberCount == 0 }  // load-scaled: a fixed 10 s could run out
                return round.promise.stream.subscriberCount == 0 ? nil : "the loop's subscription outlived it"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    /// Loops that each take a few values and drop their iterator while a producer publishes: each
    /// sees a gapless run, and with the stream still open no subscription and no value is left
    /// (the subscription holds its inbox strongly: only the dropped iterator can let it go).
    @Test(arguments: [FutureStream<StreamIteratorItem>.BufferingPolicy.unbounded, .bufferingNewest(2)])
    func `iterators dropped while values arrive leave no subscription and no value behind`(
        policy: FutureStream<StreamIteratorItem>.BufferingPolicy
    ) async throws {
        let counter = DeinitCounter()
        let promise = StreamPromise<StreamIteratorItem>(capacity: 0)
        let stopped = Locked(false)
        let producer = Task {
            await onDedicatedThread {
                var published = 0
                while !stopped.value {  // until the loops are done, so that none waits in vain
                    promise.fulfill(StreamIteratorItem(id: published, tracked: counter.make()))
                    published += 1
                    if published.isMultiple(of: 100) { pause(.microseconds(20)) }
                }
                return published
            }
        }
        var gaps: [[Int]] = []
        for loop in 0..<(Sanitizer.isActive ? 100 : 300) {
            var iterator = promise.stream.values(buffering: policy).makeAsyncIterator()
            var ids: [Int] = []
            while ids.count < loop % 5 + 1, let item = try await iterator.next() { ids.append(item.id) }
            let increasing = !zip(ids, ids.dropFirst()).contains { $0 >= $1 }
            let gapless = ids.isEmpty || ids == Array(ids[0]..<ids[0] + ids.count)
            if case .unbounded = policy, !gapless, gaps.count < 10 { gaps.append(ids) }
            if !increasing, gaps.count < 10 { gaps.append(ids) }
        }
        stopped.withLock { $0 = true }
        let published = await producer.value
        #expect(gaps.isEmpty, "\(gaps)")
        #expect(await eventually { promise.stream.subscriberCount == 0 })  // the stream has not finished
        #expect(await eventually { counter.deallocated == published })
        promise.finish()
    }
}

/// A value with an identity and a tracked lifetime.
struct StreamIteratorItem: Sendable {
    let id: Int
    let tracked: Tracked
}
