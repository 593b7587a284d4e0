import FutureLib
import FutureTestSupport
import TestCombinators
import TestSupport
import Testing

/// Nothing the library stores outlives its use: every closure (and what it captures) is released
/// after it ran, after its token cancelled it, or after its promise was dropped, and a completed
/// future graph keeps nothing alive. Checked with `DeinitCounter` (captures released) and
/// `WeakProbe` (futures released).
///
/// Cancellation's own lifetime tests (handlers after cancel, after unregister, a dropped request,
/// links, timers) are in `CancellationTests`; see `Documentation/Guarantees.md`.
@Suite struct LifetimeTests {
    // MARK: - Closures

    @Test(arguments: FutureCombinator.capturing, [true, false])
    func `a combinator's closure is released after its source completed`(combinator: FutureCombinator, succeed: Bool) {
        let counter = DeinitCounter()
        let promise = Promise<Int>()
        let request = CancellationRequest()
        let derived = combinator.apply(to: promise.future, cancellationToken: request.token, counter.make().touch)
        #expect(counter.deallocated == 0)
        if succeed { promise.fulfill(1) } else { promise.reject(TestFailure()) }
        #expect(derived.isCompleted)
        #expect(counter.deallocated == 1)
        withExtendedLifetime(request) {}
    }

    @Test(arguments: FutureCombinator.capturing)
    func `a combinator's closure is released when its token is cancelled before the source completes`(
        combinator: FutureCombinator
    ) {
        let counter = DeinitCounter()
        let promise = Promise<Int>()
        let request = CancellationRequest()
        let derived = combinator.apply(to: promise.future, cancellationToken: request.token, counter.make().touch)
        request.cancel()
        #expect(derived.result?.isCancellation == true)
        #expect(counter.deallocated == 1)  // released although the source is still pending
        #expect(!promise.future.isCompleted)
    }

    @Test(arguments: FutureCombinator.capturing)
    func `a combinator's closure is released when its promise is dropped`(combinator: FutureCombinator) {
        let counter = DeinitCounter()
        var promise: Promise<Int>? = Promise<Int>()
        let derived = combinator.apply(to: promise!.future, cancellationToken: .none, counter.make().touch)
        promise = nil  // broken: the closure runs (or not) with brokenPromise and is released
        #expect(derived.isCompleted)
        #expect(counter.deallocated == 1)
    }

    @Test(arguments: FutureCombinator.capturing)
    func `a chain with a token on a future that never completes is kept while the token can fire, then released`(
        combinator: FutureCombinator
    ) {
        let counter = DeinitCounter()
        let count = Scale.tenThousand
        var requests: [CancellationRequest] = []
        for _ in 0..<count {
            let request = CancellationRequest()
            let source = Future<Int>(on: DroppingContext()) { 0 }
            _ = combinator.apply(to: source, cancellationToken: request.token, counter.make().touch)
            requests.append(request)
        }
        // The token can still fail each derived future: nothing is released yet.
        #expect(counter.deallocated == 0)
        requests.removeAll()  // uncancelled: no token can fire any more, so nothing can observe the chains
        #expect(counter.deallocated == count)
    }

    /// The combinators over several inputs read each value as it arrives: no continuation holds an
    /// input, so a pending input that nobody holds is released with everything that waited only on
    /// it (it used to keep itself through the continuation the inputs shared: input → continuation
    /// → the inputs, for good, token or not). `firstCompleted`, `firstSuccess` and `race` remove
    /// their continuations from the inputs still pending once decided, without holding those
    /// inputs or continuations: they used to keep themselves through what removes them (input →
    /// continuation → result → removal → input).
    @Test(
        arguments: FutureCombinator.gathering,
        [false, true]
    )
    func `combinators over several inputs on a future that never completes are released`(
        combinator: FutureCombinator,
        withToken: Bool
    ) {
        let counter = DeinitCounter()
        var request: CancellationRequest? = withToken ? CancellationRequest() : nil
        var sourceProbes: [WeakProbe<Future<Int>>] = []
        var resultProbes: [WeakProbe<Future<Int>>] = []
        for _ in 0..<100 {
            let source = Future<Int>(on: DroppingContext()) { 0 }
            let result = combinator.apply(to: source, cancellationToken: request?.token ?? .none, counter.make().touch)
            sourceProbes.append(WeakProbe(source))
            resultProbes.append(WeakProbe(result))
        }
        if withToken {
            // The token can still fail each result: nothing is released yet.
            #expect(counter.deallocated == 0)
            request = nil  // uncancelled: nothing can observe the chains any more
        }
        #expect(counter.deallocated == 100)
        #expect(sourceProbes.allSatisfy { !$0.isAlive })
        #expect(resultProbes.allSatisfy { !$0.isAlive })
    }

    /// The same with a zip whose other input is a promise held here and fulfilled later: it still
    /// completes nothing (the pending input never completes), and the value it gave is dropped with the rest.
    @Test func `a zip on a future that never completes and a promise kept here goes with its pending input`() {
        let counter = DeinitCounter()
        let promise = Promise<String>()
        var resultProbe: WeakProbe<Future<(Int, String)>>?
        do {
            let source = Future<Int>(on: DroppingContext()) { 0 }
            let zipped = zip(source, promise.future, on: .synchronous)
            zipped.onComplete(on: .synchronous) { [tracked = counter.make()] _ in tracked.touch() }
            resultProbe = WeakProbe(zipped)
        }
        // The promise's future is pending: its continuation keeps the zip.
        #expect(resultProbe!.isAlive)
        promise.fulfill("kept")
        #expect(!resultProbe!.isAlive)
        #expect(counter.deallocated == 1)
    }

    @Test func `continuations with a token on a future that never completes run on cancel, or go with their request`() {
        let counter = DeinitCounter()
        let calls = Counter()
        func observe(token: CancellationToken) {
            let source = Future<Int>(on: DroppingContext()) { 0 }
            let tracked = (counter.make(), counter.make(), counter.make())
            source.onComplete(on: .synchronous, cancellationToken: token) { _ in
                tracked.0.touch()
                calls.increment()
            }
            source.onFailure(on: .synchronous, cancellationToken: token) { _ in
                tracked.1.touch()
                calls.increment()
            }
            source.onSuccess(on: .synchronous, cancellationToken: token) { _ in
                tracked.2.touch()
                calls.increment()
            }
        }
        let cancelled = CancellationRequest()
        observe(token: cancelled.token)
        #expect(counter.deallocated == 0)  // the token keeps them: its cancellation reaches them
        cancelled.cancel()
        #expect(calls.value == 2)  // onComplete and onFailure, with CancellationError
        #expect(counter.deallocated == 3)
        var dropped: CancellationRequest? = CancellationRequest()
        observe(token: dropped!.token)
        #expect(counter.deallocated == 3)
        dropped = nil
        #expect(calls.value == 2)  // released without running
        #expect(counter.deallocated == 6)
    }

    @Test func `continuations are released when their promise is dropped unresolved`() {
        let counter = DeinitCounter()
        let calls = Counter()
        var promise: Promise<Int>? = Promise<Int>()
        do {
            let tracked = (counter.make(), counter.make(), counter.make())
            promise!.future.onComplete(on: .synchronous) { _ in
                tracked.0.touch()
                calls.increment()
            }
            promise!.future.onFailure(on: .synchronous) { _ in
                tracked.1.touch()
                calls.increment()
            }
            promise!.future.onSuccess(on: .synchronous) { _ in
                tracked.2.touch()
                calls.increment()
            }
        }
        promise = nil
        #expect(calls.value == 2)  // onComplete and onFailure, with brokenPromise
        #expect(counter.deallocated == 3)
    }

    @Test func `a synchronous work closure is released after it ran`() async {
        let counter = DeinitCounter()
        let future = Future(on: .synchronous) { [tracked = counter.make()] in
            tracked.touch()
            return 1
        }
        #expect(future.result?.successValue == 1)
        #expect(counter.deallocated == 1)
    }

    @Test func `an async work closure is released after its task finished`() async {
        let counter = DeinitCounter()
        let future = Future { [tracked = counter.make()] in
            tracked.touch()
            return 1
        }
        #expect(await settled(future).successValue == 1)
        #expect(await eventually { counter.deallocated == 1 })
    }

    @Test func `an async work closure is released after its token cancelled it`() async {
        let counter = DeinitCounter()
        let request = CancellationRequest()
        let future = Future(cancellationToken: request.token) { [tracked = counter.make()] in
            tracked.touch()
            try await Task.sleep(for: .seconds(60))
            return 1
        }
        request.cancel()
        #expect(await settled(future).isCancellation)
        #expect(await eventually { counter.deallocated == 1 })
    }

    // MARK: - Future graphs

    @Test func `a completed combinator chain keeps none of its intermediate futures alive`() {
        let promise = Promise<Int>()
        let request = CancellationRequest()
        var probes: [WeakProbe<Future<Int>>] = []
        var last: Future<Int>? = promise.future
        for index in 0..<FutureCombinator.capturing.count * 2 {
            let combinator = FutureCombinator.capturing[index % FutureCombinator.capturing.count]
            last = combinator.apply(
                to: last!,
                cancellationToken: index.isMultiple(of: 2) ? request.token : .none,
                DeinitCounter().make().touch
            )
            probes.append(WeakProbe(last!))
        }
        let end = last!
        last = nil
        promise.fulfill(1)
        #expect(end.isCompleted)
        #expect(probes.dropLast().allSatisfy { !$0.isAlive })  // only the end, held here, is alive
        withExtendedLifetime(request) {}
    }

    @Test func `a pending chain is held by its source and released when the source completes`() {
        let promise = Promise<Int>()
        let counter = DeinitCounter()
        var probe: WeakProbe<Future<Int>>?
        do {
            let end = promise.future.map(on: .synchronous) { $0 + 1 }.map(on: .synchronous) { $0 + 1 }
            end.onComplete(on: .synchronous) { [tracked = counter.make()] _ in tracked.touch() }
            probe = WeakProbe(end)
        }
        #expect(probe!.isAlive)  // held by the pending source: it still has to run its continuation
        promise.fulfill(1)
        #expect(!probe!.isAlive)
        #expect(counter.deallocated == 1)
    }

    @Test func `completed zip, sequence, results, traverse and firstCompleted keep nothing alive`() {
        let counter = DeinitCounter()
        let promises = (0..<3).map { _ in Promise<Int>() }
        var inputProbes: [WeakProbe<Future<Int>>] = []
        var outputProbes: [WeakProbe<any AnyObject & Sendable>] = []
        do {
            let futures = promises.map(\.future)
            let request = CancellationRequest()
            let tracked = counter.make()
            let outputs: [any AnyObject & Sendable] = [
                zip(futures[0], futures[1], futures[2], on: .synchronous, cancellationToken: request.token),
                futures.sequence(cancellationToken: request.token),
                futures.results(cancellationToken: request.token),
                futures.firstCompleted(cancellationToken: request.token),
                [0, 1, 2].traverse(on: .synchronous, cancellationToken: request.token) { index in
                    tracked.touch()
                    return futures[index]
                },
                [0, 1, 2].traverse(on: .synchronous, maxConcurrency: 1) { futures[$0] },
            ]
            outputProbes = outputs.map { WeakProbe($0) }
            inputProbes = futures.map { WeakProbe($0) }
        }
        for (index, promise) in promises.enumerated() { promise.fulfill(index) }
        #expect(outputProbes.allSatisfy { !$0.isAlive })
        #expect(counter.deallocated == 1)
        // The promises still hold their own futures; nothing else does.
        #expect(inputProbes.allSatisfy { $0.isAlive })
        withExtendedLifetime(promises) {}
    }

    /// The server pattern: per request, the work raced against a long-lived shutdown future.
    @Test func `firstCompleted against a long-lived pending future leaves nothing on it`() {
        let shutdown = Promise<Int>()
        var probes: [WeakProbe<Future<Int>>] = []
        for index in 0..<Scale.hundredThousand {
            let work = Promise<Int>()
            let first = [work.future, shutdown.future].firstCompleted()
            work.fulfill(index)
            #expect(first.result?.successValue == index)
            if index.isMultiple(of: 10_000) { probes.append(WeakProbe(first)) }
        }
        let completed = [Future(value: 1), shutdown.future].firstCompleted()  // no continuation at all
        #expect(completed.result?.successValue == 1)
        #expect(probes.allSatisfy { !$0.isAlive })
        #expect(shutdown.future.debugDescription.hasSuffix("; 0 continuations waiting)"))
    }

    /// The fail-fast paths keep their continuation on an input still pending (Guarantees.md,
    /// "Known limits"), and with it the failed result, until that input completes.
    @Test(arguments: [FutureCombinator.zip, .sequence, .traverse])
    func `zip, sequence and traverse that failed are released when the input still pending completes`(
        _ combinator: FutureCombinator
    ) {
        let longLived = Promise<Int>()
        let request = CancellationRequest()
        var probes: [WeakProbe<any AnyObject & Sendable>] = []
        for index in 0..<1_000 {
            let work = Promise<Int>()
            let token: CancellationToken = index.isMultiple(of: 2) ? .none : request.token
            let futures = [longLived.future, work.future]
            func failed<T>(_ result: Future<T>) -> any AnyObject & Sendable {
                work.reject(SampleError(code: index))
                #expect(result.result?.sampleCode == index)
                return result
            }
            let result =
                switch combinator {
                case .zip: failed(zip(longLived.future, work.future, on: .synchronous, cancellationToken: token))
                case .sequence: failed(futures.sequence(cancellationToken: token))
                default: failed([0, 1].traverse(on: .synchronous, cancellationToken: token) { futures[$0] })
                }
            if index.isMultiple(of: 100) { probes.append(WeakProbe(result)) }
        }
        #expect(probes.allSatisfy { $0.isAlive })  // the known limit
        longLived.fulfill(0)
        #expect(probes.allSatisfy { !$0.isAlive })
        #expect(request.token.debugDescription.contains("; 0 handlers registered;"))
    }

    /// A task closure (or elements) holding the promise behind a task still pending: the traversal
    /// must let go of them once they are not needed, or that promise is kept by its own future's
    /// continuation and never breaks.
    @Test(.timeLimit(.minutes(HangLimit.minutes(1))), arguments: [nil, 1] as [Int?])
    func `a failed traverse lets go of its closure and elements, so a promise they hold can break`(
        maxConcurrency: Int?
    ) async {
        let failing = Promise<Int>()
        let capturedProbe: WeakProbe<Promise<Int>>
        let elementProbe: WeakProbe<Promise<Int>>
        let byClosure: Future<[Int]>
        let byElements: Future<[Int]>
        do {
            let captured = Promise<Int>()
            capturedProbe = WeakProbe(captured)
            byClosure = [0, 1].traverse(on: .synchronous, maxConcurrency: maxConcurrency.map { $0 + 1 }) {
                $0 == 0 ? captured.future : failing.future
            }
            // With a limit of 1, only the first element has started: the others wait for it.
            let element = Promise<Int>()
            let last = Promise<Int>()
            elementProbe = WeakProbe(element)
            byElements = [element, failing, last].traverse(
                on: .synchronous,
                maxConcurrency: maxConcurrency
            ) { $0.future }
            failing.reject(SampleError(code: 1))
        }
        await #expect(throws: SampleError(code: 1)) { try await byClosure.value() }
        if maxConcurrency == nil {
            await #expect(throws: SampleError(code: 1)) { try await byElements.value() }
        } else {  // the started element, no longer held, broke
            await #expect(throws: FutureError.brokenPromise) { try await byElements.value() }
        }
        #expect(!capturedProbe.isAlive)
        #expect(!elementProbe.isAlive)
    }

    @Test func `a timeout that did not fire releases its timer and futures`() async {
        let probes = { () -> [WeakProbe<Future<Int>>] in
            let promise = Promise<Int>()
            let limited = promise.future.timeout(after: .seconds(60), on: .synchronous)
            promise.fulfill(1)
            #expect(limited.result?.successValue == 1)
            return [WeakProbe(promise.future), WeakProbe(limited)]
        }()
        // The timer request and its Dispatch source are torn down when the future completes.
        #expect(await eventually { probes.allSatisfy { !$0.isAlive } })
    }

    @Test func `a timeout that fired releases its timer and the limited future`() {
        let promise = Promise<Int>()
        let clock = ManualClock()
        let probe = { () -> WeakProbe<Future<Int>> in
            let limited = promise.future.timeout(after: .milliseconds(1), clock: clock, on: .synchronous)
            clock.advance(by: .milliseconds(1))
            #expect(limited.result?.futureError == .timeout)
            return WeakProbe(limited)
        }()
        #expect(clock.pendingTimerCount == 0)  // the fired timer is released
        promise.fulfill(1)  // the pending source was the last holder of the limited future
        #expect(!probe.isAlive)
    }

    @Test func `a delayed future is released after it fired or was cancelled`() async {
        let request = CancellationRequest()
        let clock = ManualClock()
        let probes = { () -> [WeakProbe<Future<Int>>] in
            let fired = Future(value: 1, after: .milliseconds(1), clock: clock)
            let cancelled = Future(value: 2, after: .seconds(60), clock: clock, cancellationToken: request.token)
            clock.advance(by: .milliseconds(1))
            #expect(fired.result?.successValue == 1)
            request.cancel()
            #expect(cancelled.result?.isCancellation == true)
            return [WeakProbe(fired), WeakProbe(cancelled)]
        }()
        #expect(clock.pendingTimerCount == 0)
        #expect(probes.allSatisfy { !$0.isAlive })
        // The same on the system clock, whose timers Dispatch releases on its queue.
        let systemProbes = await { () async -> [WeakProbe<Future<Int>>] in
            let fired = Future(value: 1, after: .milliseconds(1))
            let cancelled = Future(value: 2, after: .seconds(60), cancellationToken: request.token)
            #expect(await settled(fired).successValue == 1)
            #expect(cancelled.result?.isCancellation == true)
            return [WeakProbe(fired), WeakProbe(cancelled)]
        }()
        #expect(await eventually { systemProbes.allSatisfy { !$0.isAlive } })
    }
}
