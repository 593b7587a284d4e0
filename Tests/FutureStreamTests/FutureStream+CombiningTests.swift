import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// merge, zip, combineLatest, flatMapLatest: values, end and error rules (each rule of
/// Documentation/Streams.md), cancellation and what each lets go of.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamCombiningTests {
    typealias Play = FutureStreamShapingTests

    // MARK: - merge

    @Test func `merge interleaves the streams' results in arrival order and ends when all have ended`() {
        let first = StreamPromise<Int>(capacity: 0)
        let second = StreamPromise<Int>(capacity: 0)
        let tape = Tape(merge(first.stream, second.stream))
        Play.play("1", into: first)
        Play.play("2 ✕5", into: second)
        Play.play("3 |", into: first)
        #expect(tape.text == "1 2 ✕5 3")
        Play.play("4 |", into: second)
        #expect(tape.text == "1 2 ✕5 3 4 |")
    }

    @Test func `merge of no stream has finished; merge of an array takes every stream`() {
        #expect(merge([FutureStream<Int>]()).isFinished)
        let promises = (0..<4).map { _ in StreamPromise<Int>(capacity: 1) }
        for (index, promise) in promises.enumerated() { promise.fulfill(index) }
        let merged = merge(promises.map(\.stream))
        let tape = Tape(merged)  // subscribed later: the one result the merged stream keeps
        for promise in promises { promise.finish() }
        #expect(tape.text == "3 |")
        #expect(merged.capacity == 1)
    }

    // MARK: - zip

    @Test func `zip pairs values by position, and errors pass through without taking one`() {
        let first = StreamPromise<String>(capacity: 0)
        let second = StreamPromise<Int>(capacity: 0)
        let tape = Tape(zip(first.stream, second.stream))
        first.fulfill("a")
        second.fulfill(1)
        second.reject(TestFailure(code: 7))
        second.fulfill(2)
        first.fulfill("b")
        first.fulfill("c")
        #expect(tape.text == "(\"a\", 1) ✕7 (\"b\", 2)")
    }

    @Test func `zip ends when a finished stream has no value left to pair, and leaves both`() {
        let first = StreamPromise<Int>(capacity: 0)
        let second = StreamPromise<Int>(capacity: 0)
        let zipped = zip(first.stream, second.stream)
        let tape = Tape(zipped)
        Play.play("1 2 3 |", into: first)
        #expect(tape.text == "")  // 1, 2 and 3 wait for partners
        Play.play("10 20", into: second)
        #expect(tape.text == "(1, 10) (2, 20)")
        Play.play("30", into: second)
        #expect(tape.text == "(1, 10) (2, 20) (3, 30) |")
        #expect(second.stream.subscriberCount == 0)
    }

    @Test func `zip of three groups by position and ends with the first exhausted stream`() {
        let promises = (0..<3).map { _ in StreamPromise<Int>(capacity: 0) }
        let tape = Tape(zip(promises[0].stream, promises[1].stream, promises[2].stream))
        Play.play("1 2 |", into: promises[0])
        Play.play("10 20 30", into: promises[1])
        Play.play("100", into: promises[2])
        #expect(tape.text == "(1, 10, 100)")
        Play.play("200", into: promises[2])
        #expect(tape.text == "(1, 10, 100) (2, 20, 200) |")
    }

    // MARK: - combineLatest

    @Test func `combineLatest publishes once both have a value, then on every new value`() {
        let first = StreamPromise<String>(capacity: 0)
        let second = StreamPromise<Int>(capacity: 0)
        let tape = Tape(combineLatest(first.stream, second.stream))
        second.fulfill(0)  // no pair yet
        first.fulfill("a")
        second.fulfill(1)
        second.reject(TestFailure(code: 3))
        first.fulfill("b")
        first.finish()
        second.fulfill(2)  // the first one's latest value goes on
        #expect(tape.text == "(\"a\", 0) (\"a\", 1) ✕3 (\"b\", 1) (\"b\", 2)")
        second.finish()
        #expect(tape.text.hasSuffix(" |"))
    }

    @Test func `combineLatest's first pair takes the latest value of each stream, as Combine and RxSwift do`() {
        // swift-async-algorithms pulls the values its base sequences buffered one by one and pairs
        // each: (1, 10), (2, 10), (3, 10). A stream has no such buffer: its latest value is its value.
        let first = StreamPromise<Int>(capacity: 0)
        let second = StreamPromise<Int>(capacity: 0)
        let tape = Tape(combineLatest(first.stream, second.stream))
        Play.play("1 2 3", into: first)
        Play.play("10", into: second)
        #expect(tape.text == "(3, 10)")
    }

    @Test func `combineLatest ends at once when a stream ends before its first value`() {
        let first = StreamPromise<Int>(capacity: 0)
        let second = StreamPromise<Int>(capacity: 0)
        let combined = combineLatest(first.stream, second.stream)
        let tape = Tape(combined)
        first.fulfill(1)
        second.finish()
        #expect(tape.text == "|")
        #expect(first.stream.subscriberCount == 0)
    }

    @Test func `combineLatest of three`() {
        let promises = (0..<3).map { _ in StreamPromise<Int>(capacity: 0) }
        let tape = Tape(combineLatest(promises[0].stream, promises[1].stream, promises[2].stream))
        promises[0].fulfill(1)
        promises[1].fulfill(2)
        promises[2].fulfill(3)
        promises[1].fulfill(4)
        for promise in promises { promise.finish() }
        #expect(tape.text == "(1, 2, 3) (1, 4, 3) |")
    }

    // MARK: - flatMapLatest

    @Test func `flatMapLatest publishes only the latest inner stream and cancels the previous one's token`() {
        let source = StreamPromise<Int>(capacity: 0)
        let inners = (0..<2).map { _ in StreamPromise<Int>(capacity: 0) }
        let tokens = Locked<[CancellationToken]>([])
        let latest = source.stream.flatMapLatest(on: .synchronous) { index, token -> FutureStream<Int> in
            tokens.withLock { $0.append(token) }
            return inners[index].stream
        }
        let tape = Tape(latest)
        source.fulfill(0)
        inners[0].fulfill(1)
        source.fulfill(1)
        #expect(tokens.value[0].isCancellationRequested)
        #expect(!tokens.value[1].isCancellationRequested)
        #expect(inners[0].stream.subscriberCount == 0)
        inners[0].fulfill(2)  // left
        inners[1].fulfill(3)
        source.reject(TestFailure(code: 8))
        source.finish()
        #expect(tape.text == "1 3 ✕8")  // the current inner stream goes on
        inners[1].fulfill(4)
        inners[1].finish()
        #expect(tape.text == "1 3 ✕8 4 |")
    }

    @Test func `flatMapLatest to futures drops a replaced future's result`() {
        let source = StreamPromise<Int>(capacity: 0)
        let promises = (0..<2).map { _ in Promise<Int>() }
        let tape = Tape(source.stream.flatMapLatest(on: .synchronous) { index, _ in promises[index].future })
        source.fulfill(0)
        source.fulfill(1)
        source.finish()
        promises[0].fulfill(10)
        #expect(tape.text == "")
        promises[1].fulfill(11)
        #expect(tape.text == "11 |")
    }

    @Test func `flatMapLatest cancelled leaves the inner stream and cancels its token`() {
        let source = StreamPromise<Int>(capacity: 0)
        let inner = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let innerToken = Locked<CancellationToken?>(nil)
        let latest = source.stream.flatMapLatest(on: .synchronous, cancellationToken: request.token) {
            _,
            token -> FutureStream<Int> in
            innerToken.withLock { $0 = token }
            return inner.stream
        }
        let tape = Tape(latest)
        source.fulfill(0)
        inner.fulfill(1)
        request.cancel()
        inner.fulfill(2)
        #expect(tape.text == "1 ✕c |")
        #expect(innerToken.value?.isCancellationRequested == true)
        #expect(inner.stream.subscriberCount == 0)
        #expect(source.stream.subscriberCount == 0)
    }

    @Test func `flatMapLatest that nobody holds leaves its source and its inner stream`() {
        let source = StreamPromise<Int>(capacity: 0)
        let inner = StreamPromise<Int>(capacity: 0)
        let innerToken = Locked<CancellationToken?>(nil)
        do {
            let latest = source.stream.flatMapLatest(on: .synchronous) { _, token -> FutureStream<Int> in
                innerToken.withLock { $0 = token }
                return inner.stream
            }
            source.fulfill(0)
            #expect(inner.stream.subscriberCount == 1)
            _ = latest
        }
        #expect(source.stream.subscriberCount == 0)
        #expect(inner.stream.subscriberCount == 0)
        #expect(innerToken.value?.isCancellationRequested == true)
    }

    // MARK: - flatMapLatest, async closures

    @Test func `async flatMapLatest switches to the latest call: a new value cancels the running one's token and task`()
        async
    {
        let source = StreamPromise<Int>(capacity: 0)
        let started = (0..<3).map { _ in Promise<CancellationToken>() }
        let calls = Locked<[String]>([])
        let firstCancelled = Promise<Void>()
        let release = Promise<Void>()  // lets the cancelled first call return
        let latest = source.stream.flatMapLatest { index, token in
            calls.withLock { $0.append("start \(index)") }
            started[index].fulfill(token)
            if index == 0 {
                while !Task.isCancelled { await Task.yield() }  // replaced mid-call
                #expect(token.isCancellationRequested)
                firstCancelled.fulfill(())
                await withCheckedContinuation { continuation in
                    release.future.onComplete(on: .synchronous) { _ in continuation.resume() }
                }
                calls.withLock { $0.append("end 0") }
                return "call 0, too late"
            }
            return "call \(index)"
        }
        let recorder = StreamRecorder<String>().record(latest)
        source.fulfill(0)
        _ = try? await started[0].future.value()
        source.fulfill(1)  // cancels call 0; call 1 waits for it to return
        _ = try? await firstCancelled.future.value()
        source.fulfill(2)  // replaces call 1 before it started: it is never called
        release.fulfill(())
        source.finish()
        await recorder.finished()
        #expect(calls.value == ["start 0", "end 0", "start 2"])  // one call at a time, in order
        #expect(recorder.values == ["call 2"])
        #expect(recorder.errors.isEmpty)
        #expect(source.stream.subscriberCount == 0)
    }

    @Test func `async flatMapLatest cancelled mid-call cancels the call and ends at once`() async {
        let source = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let started = Promise<CancellationToken>()
        let sawCancellation = Promise<Bool>()
        let latest = source.stream.flatMapLatest(cancellationToken: request.token) { value, token in
            started.fulfill(token)
            while !Task.isCancelled { await Task.yield() }
            sawCancellation.fulfill(token.isCancellationRequested)
            return value
        }
        let recorder = StreamRecorder<Int>().record(latest)
        source.fulfill(1)
        let callToken = try? await started.future.value()
        request.cancel()
        #expect(recorder.isFinished)  // at once: the call is not waited for
        #expect(recorder.errors.count == 1 && recorder.errors.first is CancellationError)
        #expect(callToken?.isCancellationRequested == true)
        #expect((try? await sawCancellation.future.value()) == true)
        #expect(recorder.values.isEmpty)
        #expect(source.stream.subscriberCount == 0)
    }

    @Test func `async flatMapLatest publishes each call's result in order when none is replaced, and its throws`()
        async
    {
        let source = StreamPromise<Int>(capacity: 0)
        let latest = source.stream.flatMapLatest { value, _ in
            await Task.yield()
            if value == 3 { throw TestFailure(code: 3) }
            return value * 10
        }
        let recorder = StreamRecorder<Int>().record(latest)
        for value in 0..<6 {
            source.fulfill(value)
            await waitUntil { recorder.entries.count == value + 1 }  // this call's result, before the next value
        }
        source.reject(TestFailure(code: 9))  // the source's errors pass through
        source.finish()
        await recorder.finished()
        #expect(recorder.values == [0, 10, 20, 40, 50])
        #expect(recorder.errors.compactMap { ($0 as? TestFailure)?.code } == [3, 9])
    }

    @Test
    func `async flatMapLatest racing values: one call at a time, an increasing run that ends with the last value's`()
        async
    {
        let probe = OverlapProbe()
        for _ in 0..<Stress.heavy {
            let source = StreamPromise<Int>(capacity: 0)
            let latest = source.stream.flatMapLatest { value, _ in
                await probe.yieldInside()
                return value
            }
            let recorder = StreamRecorder<Int>().record(latest)
            for value in 0..<20 { source.fulfill(value) }
            source.finish()
            await recorder.finished()
            let values = recorder.values
            #expect(values.last == 19)  // the last call is never replaced
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 })  // no replaced call after a newer one
        }
        #expect(probe.overlaps == 0)  // one call at a time
    }

    actor Labels {
        var prefix = "label "
    }

    @Test func `async flatMapLatest on the main actor and on an actor run their calls there`() async {
        let onMainActor = FutureStream(value: 1).flatMapLatest(on: .mainActor) { value, _ in
            MainActor.assertIsolated()
            await Task.yield()
            return "main \(value)"
        }
        let labels = Labels()
        let onActor = FutureStream(value: 2).flatMapLatest(on: labels) { labels, value, _ in
            labels.assertIsolated()
            await Task.yield()
            return labels.prefix + "\(value)"
        }
        for (stream, expected) in [(onMainActor, "main 1"), (onActor, "label 2")] {
            let recorder = StreamRecorder<String>().record(stream)
            await recorder.finished()
            #expect(recorder.values == [expected])
        }
    }

    @Test(arguments: AsyncLatestForm.allCases)
    func
        `async flatMapLatest, every form, cancelled mid-call: one CancellationError, the end, the call cancelled, the source left`(
            form: AsyncLatestForm
        ) async
    {
        let source = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let started = Promise<CancellationToken>()
        let latest = form.apply(to: source.stream, cancellationToken: request.token) { value, token in
            started.fulfill(token)
            while !token.isCancellationRequested { await Task.yield() }
            return value
        }
        let recorder = StreamRecorder<Int>().record(latest)
        source.fulfill(1)
        let callToken = try? await started.future.value()
        request.cancel()
        #expect(recorder.isFinished)  // at once: the call is not waited for
        #expect(recorder.errors.count == 1 && recorder.errors.first is CancellationError)
        #expect(callToken?.isCancellationRequested == true)
        #expect(recorder.values.isEmpty)
        #expect(source.stream.subscriberCount == 0)
        source.fulfill(2)  // after the end: not called
        #expect(started.future.isCompleted)
    }

    @Test(arguments: AsyncLatestForm.allCases)
    func `async flatMapLatest, every form, that nobody holds is released, leaves its source and cancels its call`(
        form: AsyncLatestForm
    ) async {
        let source = StreamPromise<Int>(capacity: 0)
        let started = Promise<CancellationToken>()
        let returned = Promise<Void>()
        weak var released: FutureStream<Int>?
        var callToken: CancellationToken?
        do {
            let latest = form.apply(to: source.stream) { value, token in
                started.fulfill(token)
                while !token.isCancellationRequested { await Task.yield() }
                returned.fulfill(())
                return value
            }
            released = latest
            source.fulfill(1)
            // Held until the call runs: a call replaced (or ended) before it starts is not called.
            callToken = try? await started.future.value()
            withExtendedLifetime(latest) {}
        }
        #expect(released == nil)
        #expect(source.stream.subscriberCount == 0)
        #expect(callToken?.isCancellationRequested == true)
        _ = try? await returned.future.value()  // the call saw its token and returned
    }

    // MARK: - Every combining operator

    @Test(arguments: CombiningOperator.allCases)
    func `a cancelled token gives one CancellationError and the end, and leaves every source`(
        operation: CombiningOperator
    ) {
        let promises = (0..<3).map { _ in StreamPromise<Int>(capacity: 0) }
        let request = CancellationRequest()
        let combined = operation.apply(to: promises.map(\.stream), cancellationToken: request.token)
        let tape = Tape(combined)
        for promise in promises { promise.fulfill(1) }
        request.cancel()
        for promise in promises { promise.fulfill(2) }
        #expect(tape.text.hasSuffix("✕c |"))
        #expect(!tape.text.contains("2"))
        for promise in promises { #expect(promise.stream.subscriberCount == 0) }
        let kept = (0..<3).map { _ in StreamPromise<Int>(capacity: 1) }  // the new stream keeps one result too
        #expect(Tape(operation.apply(to: kept.map(\.stream), cancellationToken: .cancelled)).text == "✕c |")
    }

    @Test(arguments: CombiningOperator.allCases)
    func `a combined stream that nobody holds is released and leaves every source`(operation: CombiningOperator) {
        let promises = (0..<3).map { _ in StreamPromise<Int>(capacity: 0) }
        weak var released: FutureStream<String>?
        do {
            let combined = operation.apply(to: promises.map(\.stream), cancellationToken: .none)
            released = combined
            for promise in promises { promise.fulfill(1) }
        }
        #expect(released == nil)
        for promise in promises { #expect(promise.stream.subscriberCount == 0) }
    }
}

/// The combining operators over three streams of `Int`, as a stream of descriptions.
enum CombiningOperator: CaseIterable, Sendable {
    case merge, zip2, zip3, combineLatest2, combineLatest3, flatMapLatest

    func apply(to streams: [FutureStream<Int>], cancellationToken token: CancellationToken) -> FutureStream<String> {
        switch self {
        case .merge:
            FutureLib.merge(streams, cancellationToken: token).map(on: .synchronous) { "\($0)" }
        case .zip2:
            FutureLib.zip(streams[0], streams[1], cancellationToken: token).map(on: .synchronous) { "\($0)" }
        case .zip3:
            FutureLib.zip(streams[0], streams[1], streams[2], cancellationToken: token)
                .map(on: .synchronous) { "\($0)" }
        case .combineLatest2:
            FutureLib.combineLatest(streams[0], streams[1], cancellationToken: token)
                .map(on: .synchronous) { "\($0)" }
        case .combineLatest3:
            FutureLib.combineLatest(streams[0], streams[1], streams[2], cancellationToken: token)
                .map(on: .synchronous) { "\($0)" }
        case .flatMapLatest:
            streams[0].flatMapLatest(on: .synchronous, cancellationToken: token) { _, _ in
                FutureLib.merge(Array(streams.dropFirst()))
            }.map(on: .synchronous) { "\($0)" }
        }
    }
}

/// The async forms of `flatMapLatest` over a stream of `Int`: on a context (`.default`), on the main
/// actor, isolated to an actor. `call` is each form's work for a value.
enum AsyncLatestForm: CaseIterable, Sendable {
    case context, mainActor, actor

    actor Isolation {}

    func apply(
        to stream: FutureStream<Int>,
        cancellationToken token: CancellationToken = .none,
        _ call: @escaping @Sendable (Int, CancellationToken) async throws -> Int
    ) -> FutureStream<Int> {
        switch self {
        case .context:
            stream.flatMapLatest(on: .default, cancellationToken: token) { value, callToken in
                try await call(value, callToken)
            }
        case .mainActor:
            stream.flatMapLatest(on: .mainActor, cancellationToken: token) { value, callToken in
                MainActor.assertIsolated()
                return try await call(value, callToken)
            }
        case .actor:
            stream.flatMapLatest(on: Isolation(), cancellationToken: token) { isolation, value, callToken in
                isolation.assertIsolated()
                return try await call(value, callToken)
            }
        }
    }
}
