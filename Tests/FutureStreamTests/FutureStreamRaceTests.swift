import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// Races between producers, subscribers, tokens and the end of a stream, repeated `Stress.heavy`
/// times (1,000 by default; `make stress` raises it with `FUTURELIB_STRESS_ITERATIONS`).
///
/// Serialized: each race spins dedicated threads on a barrier, and several at once would
/// oversubscribe the cores and starve the rest of the test run.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamRaceTests {
    static let producers = 3
    static let valuesPerProducer = 10

    /// One round: a stream, subscribers on three kinds of context, and what each of them saw.
    final class Round: Sendable {
        let promise = StreamPromise<Int>(capacity: 0)
        let queue = DispatchQueue(label: "stream-race")
        let seen = (0..<3).map { _ in Locked<[Int]>([]) }
        let finished = (0..<3).map { _ in Signal() }
        let finishCalls = Counter()

        init() {
            let contexts: [any ExecutionContext] = [SynchronousExecutionContext(), queue, DispatchQueue.global()]
            for (index, context) in contexts.enumerated() {
                subscribe(index, on: context)
            }
        }

        private func subscribe(_ index: Int, on context: some ExecutionContext) {
            let seen = seen[index]
            let finished = finished[index]
            let finishCalls = finishCalls
            // Through `andThen` on `context`, then `.synchronous`: the end then comes after the last
            // value also on a concurrent context (separate `onSuccess`/`onFinish` subscribers on a
            // concurrent context are not ordered with each other).
            let handled = promise.stream.andThen(on: context) { result in
                if case .success(let value) = result { seen.withLock { $0.append(value) } }
            }
            handled.onFinish(on: .synchronous) {
                finishCalls.increment()
                finished.fire()
            }
        }

        func produce(_ producer: Int) {
            for offset in 0..<FutureStreamRaceTests.valuesPerProducer {
                promise.fulfill(producer * 1_000 + offset)
            }
        }

        /// Finishes the stream, waits for every subscriber's end, and describes what went wrong.
        func check() -> String? {
            promise.finish()
            for signal in finished where !signal.wait() { return "a subscriber never saw the end" }
            guard finishCalls.value == 3 else { return "onFinish ran \(finishCalls.value) times" }
            let expected = Set(
                (0..<FutureStreamRaceTests.producers).flatMap { producer in
                    (0..<FutureStreamRaceTests.valuesPerProducer).map { producer * 1_000 + $0 }
                }
            )
            let first = seen[0].value
            for (index, list) in seen.enumerated() {
                let values = list.value
                guard values.count == expected.count, Set(values) == expected else {
                    return "subscriber \(index) saw \(values.count) values, not each of \(expected.count) once"
                }
                guard values == first else { return "subscriber \(index) saw another order than subscriber 0" }
                for producer in 0..<FutureStreamRaceTests.producers {
                    let own = values.filter { $0 / 1_000 == producer }
                    guard own == own.sorted() else { return "producer \(producer)'s values out of order" }
                }
            }
            return nil
        }
    }

    @Test func `concurrent producers: every subscriber gets each result exactly once, all in the same order`() async {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { Round() },
            actions: (0..<Self.producers).map { producer in { @Sendable round in round.produce(producer) } },
            check: { $0.check() }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    /// A subscriber whose token is cancelled while results arrive.
    final class CancelRound: Sendable {
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let seen = Locked<[Result<Int, any Error>]>([])
        let released = DeinitCounter()

        init() {
            let seen = seen
            let tracked = released.make()
            promise.stream.onComplete(on: .synchronous, cancellationToken: request.token) { result in
                tracked.touch()
                seen.withLock { $0.append(result) }
            }
        }

        func check() -> String? {
            promise.fulfill(-1)  // after the cancellation: must not arrive
            let results = seen.value
            guard let last = results.last, last.isCancellation else { return "no CancellationError last" }
            let values = results.dropLast().map { $0.successValue ?? -2 }
            guard values == Array(0..<values.count) else { return "values \(values) are not a prefix" }
            guard released.deallocated == 1 else { return "handler not released" }
            return nil
        }
    }

    @Test func `token cancellation racing results: a prefix, then one CancellationError, then nothing`() async {
        let failures = await race(
            iterations: Stress.heavy,  // each round sends ten results: heavy, not cheap
            setup: { CancelRound() },
            actions: [
                { @Sendable round in for value in 0..<10 { round.promise.fulfill(value) } },
                { @Sendable round in round.request.cancel() },
            ],
            check: { $0.check() }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    /// Subscribers leaving by their tokens (two threads) and joining (a third, which also makes one
    /// of its own leave again) while a fourth sends values: the slots of the leaving ones empty and
    /// compact while others are appended.
    final class ChurnRound: Sendable {
        static let values = 20
        static let initial = 8
        static let all = 12  // 8 subscribed before the race, 4 joining during it
        static let leaving = [[0, 2, 4], [5, 3, 1]]  // the two unsubscribing threads' subscribers
        static let joinerLeaving = 9
        static let survivors = [6, 7, 8, 10, 11]

        let promise = StreamPromise<Int>(capacity: 0)
        let requests = (0..<all).map { _ in CancellationRequest() }
        /// What each subscriber got: the values, and -1 for its `CancellationError`.
        let seen = (0..<all).map { _ in Locked<[Int]>([]) }
        /// The value whose `fulfill` started last; set before each one, under a lock (one total order).
        let started = Locked(-1)
        /// `started` when the subscriber's subscription returned (a value started later must arrive).
        let joinedAt = (0..<all).map { _ in Locked<Int?>(nil) }
        /// `started` when its token's `cancel()` returned (a value started later must not arrive).
        let leftAt = (0..<all).map { _ in Locked<Int?>(nil) }

        init() {
            for index in 0..<Self.initial { subscribe(index) }
        }

        private func subscribe(_ index: Int) {
            let seen = seen[index]
            promise.stream.onComplete(on: .synchronous, cancellationToken: requests[index].token) { result in
                seen.withLock { $0.append(result.successValue ?? -1) }
            }
        }

        func produce() {
            for value in 0..<Self.values {
                started.withLock { $0 = value }
                promise.fulfill(value)
            }
        }

        func unsubscribe(_ indices: [Int]) {
            for index in indices {
                requests[index].cancel()
                let now = started.value
                leftAt[index].withLock { $0 = now }
            }
        }

        func join() {
            for index in Self.initial..<Self.all {
                subscribe(index)
                let now = started.value
                joinedAt[index].withLock { $0 = now }
            }
            unsubscribe([Self.joinerLeaving])
        }

        func check() -> String? {
            let last = Self.values - 1
            for index in 0..<Self.all {
                let got = seen[index].value
                let values = got.filter { $0 >= 0 }
                guard values.isEmpty || values == Array(values[0]...values[values.count - 1]) else {
                    return "subscriber \(index) got \(got): a value lost, repeated or out of order"
                }
                if let left = leftAt[index].value {
                    guard got.last == -1, got.count == values.count + 1 else {
                        return "\(index) got \(got), no error last"
                    }
                    guard values.allSatisfy({ $0 <= left }) else {
                        return "\(index) got \(got) after leaving at \(left)"
                    }
                } else {
                    let from = joinedAt[index].value.map { $0 + 1 } ?? 0  // every value from here on
                    let complete = from > last || (values.first.map { $0 <= from } == true && values.last == last)
                    guard got.count == values.count, complete else {
                        return "subscriber \(index) (joined at \(String(describing: joinedAt[index].value))) got \(got)"
                    }
                }
                if index < Self.initial, let first = values.first, first != 0 {
                    return "subscriber \(index) got \(got), not from the first value"
                }
            }
            // The slots are whole: exactly the survivors are left, each of them reached by a value
            // and removed by its token.
            guard promise.stream.subscriberCount == Self.survivors.count else {
                return "\(promise.stream.subscriberCount) subscribers left, not \(Self.survivors.count)"
            }
            promise.fulfill(Self.values)
            for index in Self.survivors {
                guard seen[index].value.last == Self.values else { return "survivor \(index) missed the last value" }
                requests[index].cancel()
            }
            let left = promise.stream.subscriberCount
            return left == 0 ? nil : "\(left) subscribers left after every token was cancelled"
        }
    }

    @Test func `unsubscribing racing values and new subscriptions: nothing lost, nothing after cancel returned`() async
    {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { ChurnRound() },
            actions: [
                { @Sendable round in round.produce() },
                { @Sendable round in round.unsubscribe(ChurnRound.leaving[0]) },
                { @Sendable round in round.unsubscribe(ChurnRound.leaving[1]) },
                { @Sendable round in round.join() },
            ],
            check: { $0.check() }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    /// A subscriber added while the stream finishes.
    final class FinishRound: Sendable {
        let promise = StreamPromise<Int>(capacity: 2)
        let seen = Locked<[Int]>([])
        let finishCalls = Counter()

        init() {
            promise.fulfill(1)
            promise.fulfill(2)
        }

        func subscribe() {
            let seen = seen
            let finishCalls = finishCalls
            promise.stream.onSuccess(on: .synchronous) { value in seen.withLock { $0.append(value) } }
            promise.stream.onFinish(on: .synchronous) { finishCalls.increment() }
        }

        func check() -> String? {
            guard finishCalls.value == 1 else { return "onFinish ran \(finishCalls.value) times" }
            guard seen.value == [1, 2] else { return "saw \(seen.value)" }
            return nil
        }
    }

    @Test func `subscribing racing finish: the kept results and the end exactly once`() async {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { FinishRound() },
            actions: [{ @Sendable round in round.subscribe() }, { @Sendable round in round.promise.finish() }],
            check: { $0.check() }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    /// A `for await` loop (`.unbounded`: it takes results in batches) whose task is cancelled from
    /// the producer's thread at a different point each round: while it waits, or while results
    /// wait in its batch.
    @Test func `a for await loop cancelled while results arrive: an in-order prefix, each once, then it unsubscribes`()
        async throws
    {
        var failures: [String] = []
        for round in 0..<Stress.heavy where failures.count < 10 {
            let promise = StreamPromise<Int>(capacity: 0)
            let subscribed = Promise<Void>()
            let loop = Task {
                var iterator = promise.stream.values(buffering: .unbounded).makeAsyncIterator()
                subscribed.fulfill(())
                var seen: [Int] = []
                while let value = try await iterator.next() { seen.append(value) }
                return seen
            }
            try await subscribed.future.value()
            let cancelAt = round % 150
            await onDedicatedThread {
                for value in 0..<200 {
                    if value == cancelAt { loop.cancel() }
                    promise.fulfill(value)
                }
            }
            let seen = try await loop.value  // never finished: only the cancellation ends the loop
            if seen != Array(0..<seen.count) { failures.append("round \(round): \(seen) is not an in-order prefix") }
            if !(await eventually { promise.stream.subscriberCount == 0 }) {
                failures.append("round \(round): the loop's subscription outlived it")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}
