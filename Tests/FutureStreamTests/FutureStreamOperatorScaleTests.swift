import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// 10⁶ values (`make stress`; 10⁵ in `make test`) through chains of the stream operators on a
/// thread with a 512 KB stack: every value arrives, counted at the end, and nothing recurses per
/// value or per stage. Nothing asserts on time.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(5))))
struct FutureStreamOperatorScaleTests {
    static let count = Stress.override == nil ? Scale.hundredThousand / 4 : Scale.million

    @Test
    func
        `Scale: values through compactMap, removeDuplicates, scan, dropFirst, prefix, merge, chunks and reduce on a 512 KB stack`()
        async throws
    {
        let count = Self.count
        let total = Locked<Result<Int, any Error>?>(nil)
        await onSmallStack {
            let source = StreamPromise<Int>(capacity: 0)
            let other = StreamPromise<Int>(capacity: 0)
            let shaped = source.stream
                .compactMap(on: .synchronous) { $0.isMultiple(of: 7) ? nil : $0 }
                .removeDuplicates()
                .scan(0, on: .synchronous) { $0 &+ $1 }
                .dropFirst()
                .prefix(count)
            let counted = merge(shaped, other.stream)
                .chunks(ofCount: 10)
                .reduce(0, on: .synchronous) { $0 + $1.count }
            for value in 0..<count { source.fulfill(value / 2) }  // each value twice: removeDuplicates' work
            source.finish()
            other.finish()
            total.withLock { $0 = counted.result }
        }
        let expected = (0..<((count + 1) / 2)).filter { !$0.isMultiple(of: 7) }.count - 1
        #expect(try total.value?.get() == expected)
    }

    @Test
    func `Scale: values through zip, combineLatest, flatMapLatest, debounce, throttle and timeout on a 512 KB stack`()
        async throws
    {
        let count = Self.count
        let totals = Locked<[Int]>([])
        await onSmallStack {
            let clock = ManualClock()
            let left = StreamPromise<Int>(capacity: 0)
            let right = StreamPromise<Int>(capacity: 0)
            let zipped = zip(left.stream, right.stream).map(on: .synchronous) { $0 + $1 }
            let combined = combineLatest(left.stream, right.stream).map(on: .synchronous) { $0 - $1 }
            let switched = left.stream.flatMapLatest(on: .synchronous) { value, _ in FutureStream(value: value) }
            let timed = left.stream
                .timeout(after: .seconds(60), clock: clock)
                .throttle(for: .zero, clock: clock)
                .debounce(for: .zero, clock: clock)
            let counts = [zipped, combined, switched, timed].map {
                $0.reduce(0, on: .synchronous) { count, _ in count + 1 }
            }
            for value in 0..<count {
                left.fulfill(value)
                right.fulfill(value)
                if value.isMultiple(of: 1_000) { clock.advance(by: .zero) }
            }
            left.finish()
            right.finish()
            clock.advance(by: .seconds(1))
            totals.withLock { $0 = counts.map { (try? $0.result?.get()) ?? -1 } }
            #expect(clock.pendingTimerCount == 0)
        }
        // zip: a pair per value; combineLatest: one per value of either but the first; flatMapLatest:
        // one per value; debounce after throttle, flushed every 1,000 values: at least one each time.
        let result = totals.value
        #expect(result.count == 4)
        #expect(result[0] == count)
        #expect(result[1] == 2 * count - 1)
        #expect(result[2] == count)
        #expect(result[3] >= count / 1_000)
    }

    /// What a stream of increasing values reduces to: how many, the last, and whether each was
    /// greater than the one before.
    struct Run: Sendable {
        var count = 0
        var last = -1
        var isIncreasing = true

        func adding(_ value: Int) -> Run {
            Run(count: count + 1, last: value, isIncreasing: isIncreasing && value > last)
        }
    }

    @Test(arguments: AsyncLatestForm.allCases)
    func `Scale: values through async flatMapLatest (on a context, the main actor, an actor) on a 512 KB stack`(
        form: AsyncLatestForm
    ) async throws {
        let count = Self.count
        let run = Locked<Future<Run>?>(nil)
        await onSmallStack {
            let source = StreamPromise<Int>(capacity: 0)
            let latest = form.apply(to: source.stream.removeDuplicates().map(on: .synchronous) { $0 * 2 }) {
                value,
                _ in value / 2
            }
            let reduced = latest.reduce(Run(), on: .synchronous) { $0.adding($1) }
            for value in 0..<count { source.fulfill(value) }
            source.finish()
            run.withLock { $0 = reduced }
        }
        // Each value starts a call, which waits for the one it replaced; a call replaced before it
        // started is not called, a replaced one's result is dropped: an increasing run of the values,
        // ending with the last value's call, which nothing replaces.
        let result = try await run.value?.value()
        #expect(result?.isIncreasing == true)
        #expect(result?.last == count - 1)
        #expect((result?.count ?? 0) >= 1)
    }
}

/// Publishers racing on several threads into the operators: per publisher, nothing is lost,
/// duplicated or reordered.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(5))))
struct FutureStreamOperatorRaceTests {
    static let threads = 4
    static let perThread = Stress.override == nil ? 2_000 : 100_000

    /// Checks that `values` (publisher * perThread + sequence) hold every publisher's sequence, in order.
    static func check(_ values: [Int]) -> String? {
        var next = [Int](repeating: 0, count: threads)
        for value in values {
            let (publisher, sequence) = value.quotientAndRemainder(dividingBy: perThread)
            guard next[publisher] == sequence else {
                return "publisher \(publisher): got \(sequence), expected \(next[publisher])"
            }
            next[publisher] += 1
        }
        return next == [Int](repeating: perThread, count: threads) ? nil : "counts \(next)"
    }

    @Test func `Race: publishers on several threads into merge lose, duplicate and reorder nothing per publisher`()
        async
    {
        let promises = (0..<Self.threads).map { _ in StreamPromise<Int>(capacity: 0) }
        let all = merge(promises.map(\.stream)).collect()
        await onThreads(Self.threads) { index in
            for sequence in 0..<Self.perThread { promises[index].fulfill(index * Self.perThread + sequence) }
            promises[index].finish()
        }
        let values = (try? await all.value()) ?? []
        #expect(Self.check(values) == nil)
    }

    @Test
    func `Race: publishers on several threads into one stream through a chain of operators keep each one's order`()
        async
    {
        let promise = StreamPromise<Int>(capacity: 0)
        let clock = ManualClock()
        let all = promise.stream
            .compactMap(on: .default) { Optional($0) }
            .dropFirst(0)
            .prefix(.max)
            .timeout(after: .seconds(1), clock: clock)
            .chunks(ofCount: 7)
            .collect()
        await onThreads(Self.threads) { index in
            for sequence in 0..<Self.perThread { promise.fulfill(index * Self.perThread + sequence) }
        }
        promise.finish()
        let values = ((try? await all.value()) ?? []).flatMap { $0 }
        #expect(Self.check(values) == nil)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test(arguments: AsyncLatestForm.allCases)
    func
        `Race: publishers on several threads into async flatMapLatest: one call at a time, each one's values in order, the last value's call published`(
            form: AsyncLatestForm
        ) async
    {
        let promise = StreamPromise<Int>(capacity: 0)
        let running = Locked(0)
        let overlaps = Counter()
        let latest = form.apply(to: promise.stream) { value, _ in
            if running.withLock({
                $0 += 1
                return $0
            }) > 1 {
                overlaps.increment()
            }
            await Task.yield()
            running.withLock { $0 -= 1 }
            return value
        }
        let all = latest.collect()
        await onThreads(Self.threads) { index in
            for sequence in 0..<Self.perThread { promise.fulfill(index * Self.perThread + sequence) }
        }
        promise.finish()
        let values = (try? await all.value()) ?? []
        #expect(overlaps.value == 0)
        #expect(Set(values).count == values.count)  // nothing twice
        for publisher in 0..<Self.threads {
            let own = values.filter { $0 / Self.perThread == publisher }
            #expect(zip(own, own.dropFirst()).allSatisfy { $0 < $1 }, "publisher \(publisher)")
        }
        // The last value the stage saw is some publisher's last, and its call is never replaced.
        #expect(values.last.map { $0 % Self.perThread == Self.perThread - 1 } == true)
    }

    @Test
    func
        `Race: debounce on the system clock with a zero interval, values from several threads: each at most once, in order per publisher, the last one published`()
        async
    {
        let perThread = 50
        for _ in 0..<Stress.heavy {
            let promise = StreamPromise<Int>(capacity: 0)
            let all = promise.stream.debounce(for: .zero).collect()
            await onThreads(Self.threads) { index in
                for sequence in 0..<perThread { promise.fulfill(index * perThread + sequence) }
            }
            promise.finish()
            let values = (try? await all.value()) ?? []
            #expect(Set(values).count == values.count)
            for publisher in 0..<Self.threads {
                let own = values.filter { $0 / perThread == publisher }
                #expect(zip(own, own.dropFirst()).allSatisfy { $0 < $1 }, "publisher \(publisher)")
            }
            // The last value the stage saw is some publisher's last; the timer or the end publishes it.
            #expect(values.last.map { $0 % perThread == perThread - 1 } == true)
        }
    }

    @Test func `Race: two publishers into zip and combineLatest pair every value`() async {
        let count = Self.perThread
        let left = StreamPromise<Int>(capacity: 0)
        let right = StreamPromise<Int>(capacity: 0)
        let pairs = zip(left.stream, right.stream).collect()
        let latest = combineLatest(left.stream, right.stream).collect()
        await onThreads(2) { index in
            let promise = index == 0 ? left : right
            for value in 0..<count { promise.fulfill(value) }
            promise.finish()
        }
        let zipped = (try? await pairs.value()) ?? []
        #expect(zipped.count == count)
        #expect(zipped.allSatisfy { $0.0 == $0.1 })
        #expect(zipped.map(\.0) == Array(0..<count))
        // combineLatest: once both have a value, one tuple per value; each side's values in order.
        let combined = (try? await latest.value()) ?? []
        let lefts = combined.map(\.0)
        let rights = combined.map(\.1)
        #expect(zip(lefts, lefts.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(zip(rights, rights.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(combined.last.map { $0 == (count - 1, count - 1) } == true)
    }
}
