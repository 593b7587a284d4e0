import Cancellation
import FutureLib
import TestCombinators
import Testing

// Depth: every chain a user can build, 10⁵ deep in `make test` (10⁶ under `make stress`), built,
// completed, cancelled and released on a thread with a 512 KB stack, in each direction. Each case
// runs in a child process (an exit test): a stack overflow fails that case, not the run.

enum FutureDepth {
    /// Builds `depth` stages on a pending root, completes the root, checks the tail's value.
    static func completes(_ stage: FutureCombinator) {
        let depth = AttackSize.depth
        onSmallStack {
            let root = Promise<Int>()
            var tail = root.future
            for _ in 0..<depth { tail = stage.apply(to: tail) }
            root.fulfill(0)
            guard case .success(let value)? = tail.result, value == depth * stage.increment else {
                fatalError("\(stage): the tail has \(String(describing: tail.result))")
            }
        }
    }

    /// Builds `depth` stages, each with the one token, then cancels it: the tail fails.
    /// (`resolve(with:)` takes no token: its chain has no cancelling direction.)
    static func cancels(_ stage: FutureCombinator) {
        guard stage != .resolveWith else { return }
        let depth = AttackSize.depth
        onSmallStack {
            let root = Promise<Int>()
            let request = CancellationRequest()
            var tail = root.future
            for _ in 0..<depth { tail = stage.apply(to: tail, cancellationToken: request.token) }
            request.cancel()
            guard case .failure(let error)? = tail.result,
                error is CancellationError || stage == .recover
                    || stage == .recoverWith
            else {
                // `recover` turns the cancellation of the stage below into a value: any result is fine
                // for it, but the chain must have completed.
                fatalError("\(stage): the tail has \(String(describing: tail.result))")
            }
            withExtendedLifetime(root) {}
        }
    }

    /// Builds `depth` stages on a future that never completes, then releases the whole chain at
    /// once, from its root.
    static func releases(_ stage: FutureCombinator) {
        let depth = AttackSize.depth
        let counter = ReleaseCounter()
        onSmallStack {
            let root = Future<Int>(on: DroppingContext()) { 0 }
            let probe = counter.make()
            var tail = root.map(on: .synchronous) {
                probe.touch()
                return $0
            }
            for _ in 0..<depth { tail = stage.apply(to: tail) }
            _ = consume tail
            _ = consume probe
            _ = consume root  // the last reference to the whole chain
        }
        guard counter.released == 1 else { fatalError("\(stage): the chain was not released") }
    }

    /// Builds `depth` stages on a future that never completes, each with a token that is never
    /// cancelled, then releases the chain and the request: once the token can no longer fire,
    /// nothing can observe the chain, and all of it is released.
    static func releasesWithToken(_ stage: FutureCombinator) {
        let depth = AttackSize.depth
        let counter = ReleaseCounter()
        onSmallStack {
            let request = CancellationRequest()
            let root = Future<Int>(on: DroppingContext()) { 0 }
            let probe = counter.make()
            var tail = root.map(on: .synchronous, cancellationToken: request.token) {
                probe.touch()
                return $0
            }
            for _ in 0..<depth { tail = stage.apply(to: tail, cancellationToken: request.token) }
            _ = consume tail
            _ = consume probe
            _ = consume root
            _ = consume request
        }
        guard counter.released == 1 else { fatalError("\(stage): the chain was not released") }
    }
}

enum StreamDepth {
    /// Publishes through `depth` `.synchronous` `map` stages, then finishes the chain.
    static func publishesAndFinishes() {
        let depth = AttackSize.depth
        onSmallStack {
            let promise = StreamPromise<Int>(capacity: 0)
            var tail = promise.stream
            for _ in 0..<depth { tail = tail.map(on: .synchronous) { $0 + 1 } }
            let seen = Shared<[Int]>([])
            let finished = Shared(false)
            tail.onSuccess(on: .synchronous) { value in seen.withLock { $0.append(value) } }
            tail.onFinish(on: .synchronous) { finished.value = true }
            promise.fulfill(0)
            promise.fulfill(1)
            guard seen.value == [depth, depth + 1] else { fatalError("stream: saw \(seen.value)") }
            promise.finish()
            guard finished.value else { fatalError("stream: the chain did not finish") }
        }
    }

    /// Drops the promise of a chain of `depth` stages: the chain finishes.
    static func finishesWhenThePromiseIsDropped() {
        let depth = AttackSize.depth
        onSmallStack {
            var promise: StreamPromise<Int>? = StreamPromise<Int>(capacity: 0)
            var tail = promise!.stream
            for _ in 0..<depth { tail = tail.map(on: .synchronous) { $0 + 1 } }
            let finished = Shared(false)
            tail.onFinish(on: .synchronous) { finished.value = true }
            promise = nil
            guard finished.value else { fatalError("stream: the chain did not finish") }
        }
    }

    /// Publishes through `depth` streams, each the inner stream of a `Future.flatMap(capacity:)`
    /// (or `recoverWith(capacity:)`) made of the one before, then ends the chain by dropping its
    /// promise.
    static func publishesThroughFutureFlatMaps() {
        struct Failure: Error {}
        let depth = AttackSize.depth
        onSmallStack {
            var promise: StreamPromise<Int>? = StreamPromise<Int>(capacity: 0)
            var tail = promise!.stream
            for index in 0..<depth {
                let inner = tail
                tail =
                    index.isMultiple(of: 2)
                    ? Future(value: 0).flatMap(capacity: 0, on: .synchronous) { _ in inner }
                    : Future<Int>(error: Failure()).recoverWith(capacity: 0, on: .synchronous) { _ in inner }
            }
            let seen = Shared<[Int]>([])
            let finished = Shared(false)
            tail.onSuccess(on: .synchronous) { value in seen.withLock { $0.append(value) } }
            tail.onFinish(on: .synchronous) { finished.value = true }
            promise!.fulfill(0)
            promise!.fulfill(1)
            guard seen.value == [0, 1] else { fatalError("stream: saw \(seen.value)") }
            promise = nil
            guard finished.value else { fatalError("stream: the chain did not finish") }
        }
    }

    /// Cancels a chain of `depth` stages through the one token each stage was given.
    static func cancels() {
        let depth = AttackSize.depth
        onSmallStack {
            let promise = StreamPromise<Int>(capacity: 0)
            let request = CancellationRequest()
            var tail = promise.stream
            for _ in 0..<depth { tail = tail.map(on: .synchronous, cancellationToken: request.token) { $0 + 1 } }
            let finished = Shared(false)
            tail.onFinish(on: .synchronous) { finished.value = true }
            request.cancel()
            guard finished.value, tail.isFinished else { fatalError("stream: the chain did not end") }
            promise.fulfill(1)  // goes nowhere
        }
    }

    /// Releases a chain of `depth` stages (nobody holds it, nobody subscribes) on a stream that
    /// lives on, then the stream.
    static func releasesAnUnheldChain() {
        let depth = AttackSize.depth
        let counter = ReleaseCounter()
        onSmallStack {
            let promise = StreamPromise<Int>(capacity: 1)
            let probe = counter.make()
            var tail = promise.stream.map(on: .synchronous) {
                probe.touch()
                return $0
            }
            for _ in 0..<depth { tail = tail.map(on: .synchronous) { $0 + 1 } }
            _ = consume tail
            _ = consume probe
            promise.fulfill(1)
            withExtendedLifetime(promise) {}
        }
        guard counter.released == 1 else { fatalError("stream: the unheld chain was not released") }
    }
}

/// One stage of each one-source stream operator (and `merge` and `combineLatest` of one live
/// source), each passing its values on unchanged, so that a chain of them cycles through all.
enum StreamOperatorStage: CaseIterable {
    case compactMap, scan, removeDuplicates, prefix, prefixWhile, dropFirst, dropWhile, buffer, timeout, merge
    case combineLatest, chunks, flatMapLatest

    func apply(to stream: FutureStream<Int>, clock: ManualClock, token: CancellationToken) -> FutureStream<Int> {
        switch self {
        case .compactMap: stream.compactMap(on: .synchronous, cancellationToken: token) { $0 }
        case .scan: stream.scan(0, on: .synchronous, cancellationToken: token) { _, value in value }
        case .removeDuplicates: stream.removeDuplicates(cancellationToken: token)
        case .prefix: stream.prefix(.max, cancellationToken: token)
        case .prefixWhile: stream.prefix(on: .synchronous, cancellationToken: token) { _ in true }
        case .dropFirst: stream.dropFirst(0, cancellationToken: token)
        case .dropWhile: stream.drop(on: .synchronous, cancellationToken: token) { _ in false }
        case .buffer: stream.buffer(.unbounded, on: .synchronous, cancellationToken: token)
        case .timeout: stream.timeout(after: .seconds(3_600), clock: clock, cancellationToken: token)
        case .merge: FutureLib.merge(stream, cancellationToken: token)
        case .combineLatest:
            FutureLib.combineLatest(stream, FutureStream(value: 0), cancellationToken: token)
                .map(on: .synchronous, cancellationToken: token) { value, _ in value }
        case .chunks:
            stream.chunks(ofCount: 1, cancellationToken: token).map(on: .synchronous, cancellationToken: token) {
                $0[0]
            }
        case .flatMapLatest:
            stream.flatMapLatest(on: .synchronous, cancellationToken: token) { value, _ -> FutureStream<Int> in
                FutureStream(value: value)
            }
        }
    }

    /// A chain of `depth` operator stages on `stream`, cycling through every operator.
    static func chain(
        _ depth: Int,
        on stream: FutureStream<Int>,
        clock: ManualClock,
        token: CancellationToken = .none
    ) -> FutureStream<Int> {
        let stages = allCases
        var tail = stream
        for index in 0..<depth { tail = stages[index % stages.count].apply(to: tail, clock: clock, token: token) }
        return tail
    }
}

/// The stream depth attacks again, with a chain of operator stages in place of `map` stages.
enum StreamOperatorDepth {
    /// Publishes two values through `depth` operator stages, then finishes the chain.
    static func publishesAndFinishes() {
        let depth = AttackSize.depth
        onSmallStack {
            let clock = ManualClock()
            let promise = StreamPromise<Int>(capacity: 0)
            let tail = StreamOperatorStage.chain(depth, on: promise.stream, clock: clock)
            let seen = Shared<[Int]>([])
            let finished = Shared(false)
            tail.onSuccess(on: .synchronous) { value in seen.withLock { $0.append(value) } }
            tail.onFinish(on: .synchronous) { finished.value = true }
            promise.fulfill(1)
            promise.fulfill(2)
            guard seen.value == [1, 2] else { fatalError("operators: saw \(seen.value)") }
            promise.finish()
            guard finished.value else { fatalError("operators: the chain did not finish") }
            guard clock.pendingTimerCount == 0 else { fatalError("operators: timers left on the clock") }
        }
    }

    /// Drops the promise of a chain of `depth` operator stages: the chain finishes.
    static func finishesWhenThePromiseIsDropped() {
        let depth = AttackSize.depth
        onSmallStack {
            let clock = ManualClock()
            var promise: StreamPromise<Int>? = StreamPromise<Int>(capacity: 0)
            let tail = StreamOperatorStage.chain(depth, on: promise!.stream, clock: clock)
            let finished = Shared(false)
            tail.onFinish(on: .synchronous) { finished.value = true }
            promise!.fulfill(1)
            promise = nil
            guard finished.value else { fatalError("operators: the chain did not finish") }
            guard clock.pendingTimerCount == 0 else { fatalError("operators: timers left on the clock") }
        }
    }

    /// Cancels a chain of `depth` operator stages through the one token each stage was given.
    static func cancels() {
        let depth = AttackSize.depth
        onSmallStack {
            let clock = ManualClock()
            let promise = StreamPromise<Int>(capacity: 0)
            let request = CancellationRequest()
            let tail = StreamOperatorStage.chain(depth, on: promise.stream, clock: clock, token: request.token)
            let finished = Shared(false)
            tail.onFinish(on: .synchronous) { finished.value = true }
            promise.fulfill(1)
            request.cancel()
            guard finished.value, tail.isFinished else { fatalError("operators: the chain did not end") }
            guard clock.pendingTimerCount == 0 else { fatalError("operators: timers left on the clock") }
            promise.fulfill(2)  // goes nowhere
        }
    }

    /// Releases a chain of `depth` operator stages (nobody holds it, nobody subscribes) on a stream
    /// that lives on, then the stream.
    static func releasesAnUnheldChain() {
        let depth = AttackSize.depth
        let counter = ReleaseCounter()
        onSmallStack {
            let clock = ManualClock()
            let promise = StreamPromise<Int>(capacity: 1)
            let probe = counter.make()
            let head = promise.stream.map(on: .synchronous) {
                probe.touch()
                return $0
            }
            var tail: FutureStream<Int>? = StreamOperatorStage.chain(depth, on: head, clock: clock)
            _ = consume head
            _ = consume probe
            promise.fulfill(1)
            tail = nil
            guard clock.pendingTimerCount == 0 else { fatalError("operators: timers left on the clock") }
            withExtendedLifetime(promise) {}
            withExtendedLifetime(tail) {}
        }
        guard counter.released == 1 else { fatalError("operators: the unheld chain was not released") }
    }
}

enum CancellationDepth {
    /// Cancels the root of `depth` requests, each linked to the previous one.
    static func linkedChainCancels() {
        let depth = AttackSize.depth
        onSmallStack {
            let root = CancellationRequest()
            var requests = [root]
            requests.reserveCapacity(depth + 1)
            for _ in 0..<depth { requests.append(CancellationRequest(linkedTo: requests.last!.token)) }
            root.cancel()
            guard requests.last!.token.isCancellationRequested else { fatalError("linked: the tail was not cancelled") }
        }
    }

    /// Releases `depth` requests, each linked to the previous one, without cancelling them.
    static func linkedChainReleases() {
        let depth = AttackSize.depth
        onSmallStack {
            let root = CancellationRequest()
            var tail = CancellationRequest(linkedTo: root.token)
            for _ in 0..<depth { tail = CancellationRequest(linkedTo: tail.token) }
            _ = consume tail
            withExtendedLifetime(root) {}
        }
    }

    /// Cancels a token whose handler registers the next handler, `depth` times over.
    static func handlersRegisteredFromHandlers() {
        let depth = AttackSize.depth
        onSmallStack {
            let request = CancellationRequest()
            let runs = Shared(0)
            @Sendable func register(_ remaining: Int) {
                request.token.onCancel {
                    runs.withLock { $0 += 1 }
                    if remaining > 0 { register(remaining - 1) }
                }
            }
            register(depth)
            request.cancel()
            guard runs.value == depth + 1 else { fatalError("handlers: \(runs.value) ran") }
        }
    }
}

extension Attacks {
    @Suite(.serialized, .timeLimit(.minutes(AttackLimit.minutes(10))))
    struct ScaleDepthAttacks {
        // Exit tests capture no values here: each body names its case as a literal.

        @Test func `a future chain of every combinator completes`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    for stage in FutureCombinator.chainStages { FutureDepth.completes(stage) }
                }
            )
        }

        @Test func `a future chain of every combinator is cancelled by its one token`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    for stage in FutureCombinator.chainStages { FutureDepth.cancels(stage) }
                }
            )
        }

        @Test func `a future chain of every combinator on a future that never completes is released`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    for stage in FutureCombinator.chainStages { FutureDepth.releases(stage) }
                }
            )
        }

        @Test func `a future chain with a live token on a future that never completes is released`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    for stage in FutureCombinator.chainStages { FutureDepth.releasesWithToken(stage) }
                }
            )
        }

        @Test func `values publish through a chain of stream maps, and its end`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    StreamDepth.publishesAndFinishes()
                }
            )
        }

        @Test func `values publish through a chain of future flatMaps to streams, and its end`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    StreamDepth.publishesThroughFutureFlatMaps()
                }
            )
        }

        @Test func `a chain of stream maps ends when its promise is dropped`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    StreamDepth.finishesWhenThePromiseIsDropped()
                }
            )
        }

        @Test func `a chain of stream maps is cancelled by its one token`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { StreamDepth.cancels() }
            )
        }

        @Test func `a chain of stream maps that nobody holds is released while its source lives`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    StreamDepth.releasesAnUnheldChain()
                }
            )
        }

        @Test func `values publish through a chain of every stream operator, and its end`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    StreamOperatorDepth.publishesAndFinishes()
                }
            )
        }

        @Test func `a chain of stream operators ends when its promise is dropped`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    StreamOperatorDepth.finishesWhenThePromiseIsDropped()
                }
            )
        }

        @Test func `a chain of stream operators is cancelled by its one token`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    StreamOperatorDepth.cancels()
                }
            )
        }

        @Test func `a chain of stream operators that nobody holds is released while its source lives`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    StreamOperatorDepth.releasesAnUnheldChain()
                }
            )
        }

        @Test
        func `a chain of linked requests is cancelled from its root`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    CancellationDepth.linkedChainCancels()
                }
            )
        }

        @Test
        func `a chain of linked requests is released uncancelled`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    CancellationDepth.linkedChainReleases()
                }
            )
        }

        @Test
        func `handlers registered from handlers all run`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    CancellationDepth.handlersRegisteredFromHandlers()
                }
            )
        }
    }
}

/// Prints the end of a failed exit test's standard error (the child's `fatalError` message).
func report(_ result: ExitTest.Result?) {
    guard let result, result.exitStatus != .exitCode(0) else { return }
    let text = String(decoding: result.standardErrorContent.suffix(2000), as: UTF8.self)
    print("attack child's standard error:\n\(text)")
}
