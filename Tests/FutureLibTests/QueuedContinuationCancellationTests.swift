import Dispatch
import FutureLib
import FutureTestSupport
import Synchronization
import TestSupport
import Testing

/// A continuation that has not started when its token is cancelled gets `CancellationError`
/// instead of the value (Guarantees.md): also when the future completed first and the job that
/// delivers the value already waits on its context. The case the migration guide shows: a reused
/// cell cancels its token, and a reply already queued on the main queue must not touch it.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct QueuedContinuationCancellationTests {
    /// Where the continuation waits.
    enum Place: String, CaseIterable, Sendable {
        case dispatchQueue, limitedContext
    }

    enum Kind: String, CaseIterable, Sendable {
        case onComplete, onSuccess, onFailure
    }

    struct Boom: Error {}

    /// A serial context kept busy by a job that waits for ``release()``: what is queued after it waits.
    final class Busy: Sendable {
        let context: any ExecutionContext
        private let gate = DispatchSemaphore(value: 0)

        init(_ place: Place) {
            switch place {
            case .dispatchQueue: context = DispatchQueue(label: "FutureLibTests.busy")
            case .limitedContext: context = LimitedExecutionContext(maxConcurrency: 1)
            }
            context.execute { [gate] in gate.wait() }  // a plain semaphore: the slot stays taken
        }

        /// Lets the busy job end, and suspends until every job queued behind it has run.
        func release() async {
            gate.signal()
            await withCheckedContinuation { continuation in context.execute { continuation.resume() } }
        }
    }

    /// Appends "value", "cancelled" or the error to `calls`.
    static func record(_ result: Result<Int, any Error>, into calls: Locked<[String]>) {
        calls.withLock {
            switch result {
            case .success: $0.append("value")
            case .failure(let error): $0.append(error is CancellationError ? "cancelled" : "\(error)")
            }
        }
    }

    /// Registers `kind` on `future`; records what it gets (``record(_:into:)``).
    static func register(
        _ kind: Kind,
        on future: Future<Int>,
        context: any ExecutionContext,
        token: CancellationToken,
        into calls: Locked<[String]>
    ) {
        @Sendable func record(_ result: Result<Int, any Error>) { Self.record(result, into: calls) }
        switch kind {
        case .onComplete: future.onComplete(on: context, cancellationToken: token) { record($0) }
        case .onSuccess: future.onSuccess(on: context, cancellationToken: token) { record(.success($0)) }
        case .onFailure: future.onFailure(on: context, cancellationToken: token) { record(.failure($0)) }
        }
    }

    /// What a continuation whose token won gets: `CancellationError` once, or nothing for `onSuccess`.
    static func cancelled(_ kind: Kind) -> [String] {
        kind == .onSuccess ? [] : ["cancelled"]
    }

    @Test(arguments: Place.allCases, Kind.allCases)
    func `a continuation on a completed future, queued when its token is cancelled, gets CancellationError`(
        place: Place,
        kind: Kind
    ) async {
        let busy = Busy(place)
        let calls = Locked<[String]>([])
        let request = CancellationRequest()
        Self.register(kind, on: Future(value: 1), context: busy.context, token: request.token, into: calls)
        request.cancel()  // before the queued callback ran
        await busy.release()
        #expect(calls.value == Self.cancelled(kind))
    }

    @Test(arguments: Place.allCases, Kind.allCases)
    func `a continuation queued by the completion when its token is cancelled gets CancellationError`(
        place: Place,
        kind: Kind
    ) async {
        let busy = Busy(place)
        let calls = Locked<[String]>([])
        let request = CancellationRequest()
        let promise = Promise<Int>()
        Self.register(kind, on: promise.future, context: busy.context, token: request.token, into: calls)
        promise.fulfill(1)  // queues the continuation behind the busy job
        request.cancel()
        await busy.release()
        #expect(calls.value == Self.cancelled(kind))
    }

    @Test(arguments: Place.allCases, Kind.allCases)
    func `a token cancelled after the continuation ran changes nothing`(place: Place, kind: Kind) async {
        let busy = Busy(place)
        let calls = Locked<[String]>([])
        let request = CancellationRequest()
        Self.register(kind, on: Future(value: 1), context: busy.context, token: request.token, into: calls)
        await busy.release()
        request.cancel()
        #expect(calls.value == (kind == .onFailure ? [] : ["value"]))
    }

    /// Registers the async-closure form of `kind` on `future`; records as ``register(_:on:context:token:into:)``.
    static func registerAsync(
        _ kind: Kind,
        on future: Future<Int>,
        context: any ExecutionContext,
        token: CancellationToken,
        into calls: Locked<[String]>
    ) {
        @Sendable func record(_ result: Result<Int, any Error>) { Self.record(result, into: calls) }
        switch kind {
        case .onComplete:
            future.onComplete(on: context, cancellationToken: token) { @concurrent result async in record(result) }
        case .onSuccess:
            future.onSuccess(on: context, cancellationToken: token) { @concurrent value async in record(.success(value))
            }
        case .onFailure:
            future.onFailure(on: context, cancellationToken: token) { @concurrent error async in record(.failure(error))
            }
        }
    }

    /// Lets the jobs queued on `context` run until `calls` holds `count` entries (at most `hops`
    /// round trips through the context): the task of an async closure may hop to it again.
    static func settle(
        _ context: any ExecutionContext,
        until calls: Locked<[String]>,
        count: Int,
        hops: Int = 1_000
    ) async {
        for _ in 0..<hops where calls.value.count < count {
            await withCheckedContinuation { continuation in context.execute { continuation.resume() } }
            await Task.yield()
        }
    }

    /// As the synchronous forms: the task that would call the closure is queued behind a busy job
    /// when the token is cancelled. `onFailure` is given a failure (a success never starts its task).
    @Test(arguments: Place.allCases, Kind.allCases)
    func `an async continuation whose task is queued when its token is cancelled gets CancellationError`(
        place: Place,
        kind: Kind
    ) async {
        let busy = Busy(place)
        let calls = Locked<[String]>([])
        let request = CancellationRequest()
        let promise = Promise<Int>()
        Self.registerAsync(kind, on: promise.future, context: busy.context, token: request.token, into: calls)
        // The task that calls the closure waits behind the busy job.
        if kind == .onFailure { promise.reject(Boom()) } else { promise.fulfill(1) }
        request.cancel()
        await busy.release()
        await Self.settle(busy.context, until: calls, count: Self.cancelled(kind).count)
        #expect(calls.value == Self.cancelled(kind))
    }

    /// Where the async form differs from the synchronous one: its `onFailure` decides when the
    /// future completes, on the completing thread, whether there is an error to start a task for.
    /// A success starts none, so a token cancelled afterwards has nothing to reach.
    @Test(arguments: Place.allCases)
    func `an async onFailure on a success starts no task, so a later cancellation calls nothing`(place: Place) async {
        let busy = Busy(place)
        let calls = Locked<[String]>([])
        let request = CancellationRequest()
        let promise = Promise<Int>()
        Self.registerAsync(.onFailure, on: promise.future, context: busy.context, token: request.token, into: calls)
        promise.fulfill(1)
        request.cancel()
        await busy.release()
        await Self.settle(busy.context, until: calls, count: 1, hops: 10)
        #expect(calls.value == [])
    }

    /// Every one-source combinator with a closure, its closure queued on a busy context.
    enum Combinator: String, CaseIterable, Sendable {
        case map, flatMap, filter, transform, andThen, recover, recoverWith, mapError, ensure, hop, asyncMap
    }

    @Test(arguments: Place.allCases, Combinator.allCases)
    func `a combinator whose closure is queued when its token is cancelled fails with CancellationError`(
        place: Place,
        combinator: Combinator
    ) async {
        let busy = Busy(place)
        let context = busy.context
        let request = CancellationRequest()
        let token = request.token
        let ran = Atomic<Int>(0)
        let value = Future(value: 1)
        let failure = Future<Int>(error: Boom())
        let derived: Future<Int> =
            switch combinator {
            case .map: value.map(on: context, cancellationToken: token) { _ in ran.add(1, ordering: .relaxed).newValue }
            case .flatMap:
                value.flatMap(on: context, cancellationToken: token) { _ in
                    Future(value: ran.add(1, ordering: .relaxed).newValue)
                }
            case .filter:
                value.filter(on: context, cancellationToken: token) { _ in ran.add(1, ordering: .relaxed).newValue > 0 }
            case .transform:
                value.transform(on: context, cancellationToken: token) { result in
                    ran.add(1, ordering: .relaxed)
                    return result
                }
            case .andThen:
                value.andThen(on: context, cancellationToken: token) { _ in _ = ran.add(1, ordering: .relaxed) }
            case .recover:
                failure.recover(on: context, cancellationToken: token) { _ in ran.add(1, ordering: .relaxed).newValue }
            case .recoverWith:
                failure.recoverWith(on: context, cancellationToken: token) { _ in
                    Future(value: ran.add(1, ordering: .relaxed).newValue)
                }
            case .mapError:
                failure.mapError(on: context, cancellationToken: token) { error in
                    ran.add(1, ordering: .relaxed)
                    return error
                }
            case .ensure: value.ensure(on: context, cancellationToken: token) { _ = ran.add(1, ordering: .relaxed) }
            case .hop: value.hop(to: context, cancellationToken: token)
            case .asyncMap:
                value.map(on: context, cancellationToken: token) { @concurrent _ async in
                    ran.add(1, ordering: .relaxed).newValue
                }
            }
        request.cancel()
        await busy.release()
        await #expect(throws: CancellationError.self) { try await derived.value() }
        // `ensure`'s cleanup runs whatever happened (with the cancellation, once); no other closure runs.
        #expect(ran.load(ordering: .relaxed) == (combinator == .ensure ? 1 : 0))
    }

    @Test(arguments: Place.allCases)
    func `stream results and the end queued when the token is cancelled are not delivered`(place: Place) async {
        let busy = Busy(place)
        let calls = Locked<[String]>([])
        let request = CancellationRequest()
        let promise = StreamPromise<Int>()
        promise.stream.onComplete(on: busy.context, cancellationToken: request.token) { result in
            calls.withLock { $0.append((try? result.get()).map { "\($0)" } ?? "cancelled") }
        }
        promise.stream.onFinish(on: busy.context, cancellationToken: request.token) {
            calls.withLock { $0.append("finished") }
        }
        promise.fulfill(1)
        promise.fulfill(2)
        promise.finish()  // every event queued behind the busy job
        request.cancel()
        await busy.release()
        #expect(calls.value == ["cancelled"])
    }

    // MARK: - The race of cancel() against the queued job starting

    /// A continuation raced by its token's cancellation is called exactly once: with the value if
    /// its job started first, with `CancellationError` otherwise; `onSuccess` at most once.
    @Test(arguments: Kind.allCases)
    func `cancel() racing the queued continuation's start reaches it exactly once`(kind: Kind) async {
        struct Round: Sendable {
            let request = CancellationRequest()
            let calls = Locked<[String]>([])
            let done = DispatchSemaphore(value: 0)
            /// How long `cancel()` holds off, at most (reads of `calls`), so that both sides are hit.
            let holdOff = Int.random(in: 0..<10_000)
        }
        let queue = DispatchQueue(label: "FutureLibTests.race")
        let completed = Future(value: 1)
        let outcomes = Locked<[[String]: Int]>([:])  // printed: whether both sides of the race were hit
        let failures = await race(
            iterations: Stress.cheap,
            setup: { Round() },
            actions: [
                { round in
                    Self.register(kind, on: completed, context: queue, token: round.request.token, into: round.calls)
                    queue.async { round.done.signal() }
                },
                { round in
                    for _ in 0..<round.holdOff where round.calls.value.isEmpty {}
                    round.request.cancel()
                },
            ],
            check: { round in
                round.done.wait()
                let calls = round.calls.value
                outcomes.withLock { $0[calls, default: 0] += 1 }
                switch kind {
                case .onComplete where calls == ["value"] || calls == ["cancelled"]: return nil
                case .onSuccess where calls == [] || calls == ["value"]: return nil
                case .onFailure where calls == [] || calls == ["cancelled"]: return nil
                default: return "\(kind): \(calls)"
                }
            }
        )
        print("\(kind) racing cancel(), outcomes over \(Stress.cheap) rounds: \(outcomes.value)")
        #expect(failures.isEmpty, "\(failures)")
    }

    /// The same race when the completion queues the job, for a `map`: its closure runs at most
    /// once, and the derived future gets the value only if it ran (the token fails the derived
    /// future at once, also while its closure runs: Guarantees.md, a combinator's token).
    @Test func `cancel() racing the completion and the queued map runs the closure at most once`() async {
        final class Round: Sendable {
            let request = CancellationRequest()
            let promise = Promise<Int>()
            let ran = Locked(0)
            let derived: Future<Int>
            /// How long `cancel()` holds off, at most (reads of `ran`): with none, the queue's thread
            /// wakes after `cancel()` in nearly every round, and only the cancelled side is hit.
            let holdOff = Int.random(in: 0..<10_000)

            init(queue: DispatchQueue) {
                derived = promise.future.map(on: queue, cancellationToken: request.token) { [ran] value in
                    ran.withLock { $0 += 1 }
                    return value
                }
            }
        }
        let queue = DispatchQueue(label: "FutureLibTests.race")
        let outcomes = Locked<[String: Int]>([:])  // printed: whether both sides of the race were hit
        let failures = await race(
            iterations: Stress.cheap,
            setup: { Round(queue: queue) },
            actions: [
                { round in round.promise.fulfill(1) },
                { round in
                    for _ in 0..<round.holdOff where round.ran.value == 0 {}
                    round.request.cancel()
                },
            ],
            check: { round in
                queue.sync {}
                let ran = round.ran.value
                outcomes.withLock { $0["\(String(describing: round.derived.result)), ran \(ran)", default: 0] += 1 }
                switch round.derived.result {
                case .success(1)? where ran == 1: return nil
                case .failure(is CancellationError)? where ran <= 1: return nil
                case let other: return "\(String(describing: other)), the closure ran \(ran) times"
                }
            }
        )
        print("map racing cancel(), outcomes over \(Stress.cheap) rounds: \(outcomes.value)")
        #expect(failures.isEmpty, "\(failures)")
    }
}
