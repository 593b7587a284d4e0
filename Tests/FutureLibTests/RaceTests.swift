import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// Races between completion, registration and token cancellation, repeated `Stress.cheap` times
/// (10,000 by default; `make stress` raises it with `FUTURELIB_STRESS_ITERATIONS`, and the time
/// limit with it).
///
/// Serialized: each race spins two or three dedicated threads on a barrier, and several at once
/// would oversubscribe the cores and starve the rest of the test run.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(3))))
struct RaceTests {
    /// What one continuation saw: how often it ran, and whether with a value or with a cancellation.
    final class Round: Sendable {
        let promise = Promise<Int>()
        let request = CancellationRequest()
        let values = Counter()
        let cancellations = Counter()
        let others = Counter()

        func record(_ result: Result<Int, any Error>) {
            switch result {
            case .success: values.increment()
            case .failure(let error) where error is CancellationError: cancellations.increment()
            case .failure: others.increment()
            }
        }

        var calls: Int { values.value + cancellations.value + others.value }

        func describe() -> String {
            "values \(values.value), cancellations \(cancellations.value), others \(others.value)"
        }
    }

    @Test func `completion racing token cancellation reaches onComplete exactly once with one of the two`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: {
                let round = Round()
                round.promise.future.onComplete(on: .synchronous, cancellationToken: round.request.token) {
                    round.record($0)
                }
                return round
            },
            actions: [{ @Sendable round in round.promise.fulfill(1) }, { @Sendable round in round.request.cancel() }],
            check: { round in
                guard round.calls == 1, round.others.value == 0 else { return round.describe() }
                return round.promise.future.result?.successValue == 1 ? nil : "future not fulfilled"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `completion racing token cancellation reaches onFailure once and onSuccess at most once`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: {
                let round = Round()
                let token = round.request.token
                round.promise.future.onSuccess(on: .synchronous, cancellationToken: token) { _ in
                    round.values.increment()
                }
                round.promise.future.onFailure(on: .synchronous, cancellationToken: token) {
                    round.record(.failure($0))
                }
                return round
            },
            actions: [{ @Sendable round in round.promise.fulfill(1) }, { @Sendable round in round.request.cancel() }],
            check: { round in
                // onFailure is cancelled or never runs (a success); onSuccess runs iff it won.
                let cancelled = round.cancellations.value
                let succeeded = round.values.value
                guard cancelled <= 1, succeeded <= 1, round.others.value == 0 else { return round.describe() }
                return nil
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `registration racing completion runs the continuation exactly once`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { Round() },
            actions: [
                { round in round.promise.future.onComplete(on: .synchronous) { round.record($0) } },
                { $0.promise.fulfill(1) },
            ],
            check: { round in round.calls == 1 && round.values.value == 1 ? nil : round.describe() }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `registration racing completion and token cancellation yields exactly one call`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { Round() },
            actions: [
                { round in
                    round.promise.future.onComplete(on: .synchronous, cancellationToken: round.request.token) {
                        round.record($0)
                    }
                },
                { $0.promise.fulfill(1) },
                { $0.request.cancel() },
            ],
            check: { round in round.calls == 1 && round.others.value == 0 ? nil : round.describe() }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `registrations on a serial queue racing the completer's dispatch run once each, in registration order`()
        async
    {
        final class Ordered: Sendable {
            let promise = Promise<Int>()
            let order = Locked<[Int]>([])
        }
        let queue = DispatchQueue(label: "RaceTests.serial")
        let failures = await race(
            iterations: Stress.cheap,
            setup: {
                let state = Ordered()
                for index in 0..<3 {
                    state.promise.future.onComplete(on: queue) { _ in state.order.withLock { $0.append(index) } }
                }
                return state
            },
            actions: [
                { @Sendable state in state.promise.fulfill(1) },
                { @Sendable state in
                    // Before, while or after the completer hands the first three to the queue.
                    for index in 3..<5 {
                        state.promise.future.onComplete(on: queue) { _ in state.order.withLock { $0.append(index) } }
                    }
                },
            ],
            check: { state in
                queue.sync {}  // every continuation was handed to the queue before the actions returned
                let order = state.order.value
                return order == Array(0..<5) ? nil : "order \(order)"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test
    func `tokens removing some of many continuations racing completion and registration: each runs once, in order`()
        async
    {
        // Six continuations waiting (slots), four cancelled (which compacts the slots), two more
        // registered on the queue with tokens, one of them cancelled: before completion, or queued
        // behind the completer's dispatching, or after it.
        final class Many: Sendable {
            let promise = Promise<Int>()
            let requests = (0..<8).map { _ in CancellationRequest() }
            let rounds = (0..<8).map { _ in Round() }
            let order = Locked<[Int]>([])

            func register(_ index: Int, on queue: DispatchQueue) {
                promise.future.onComplete(on: queue, cancellationToken: requests[index].token) { [self] result in
                    rounds[index].record(result)
                    if case .success = result { order.withLock { $0.append(index) } }
                }
            }
        }
        let queue = DispatchQueue(label: "RaceTests.many")
        let failures = await race(
            iterations: Stress.cheap,
            setup: {
                let state = Many()
                for index in 0..<6 { state.register(index, on: queue) }
                return state
            },
            actions: [
                { @Sendable state in state.promise.fulfill(1) },
                { @Sendable state in for index in [4, 1, 0, 3] { state.requests[index].cancel() } },
                { @Sendable state in
                    state.register(6, on: queue)
                    state.register(7, on: queue)
                    state.requests[6].cancel()
                },
            ],
            check: { state in
                queue.sync {}  // every continuation was handed to the queue before the actions returned
                for (index, round) in state.rounds.enumerated() {
                    guard round.calls == 1, round.others.value == 0 else { return "\(index): \(round.describe())" }
                    let cancellable = [0, 1, 3, 4, 6].contains(index)
                    guard cancellable || round.values.value == 1 else { return "\(index) not fulfilled" }
                }
                let order = state.order.value
                return order == order.sorted() ? nil : "order \(order)"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `concurrent resolutions: exactly one try form wins and its result stays`() async {
        final class Resolutions: Sendable {
            let promise = Promise<Int>()
            let winners = Locked<[Int]>([])
        }
        let failures = await race(
            iterations: Stress.cheap,
            setup: { Resolutions() },
            actions: [
                { if $0.promise.tryFulfill(0) { $0.winners.withLock { $0.append(0) } } },
                { if $0.promise.tryResolve(.success(1)) { $0.winners.withLock { $0.append(1) } } },
                { if $0.promise.tryReject(TestFailure(code: 2)) { $0.winners.withLock { $0.append(2) } } },
            ],
            check: { state in
                let winners = state.winners.value
                guard winners.count == 1, let winner = winners.first else { return "winners \(winners)" }
                let result = state.promise.future.result
                let expected =
                    winner == 2 ? result?.testFailure == TestFailure(code: 2) : result?.successValue == winner
                return expected ? nil : "winner \(winner) but result \(String(describing: result))"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `work racing token cancellation completes the future exactly once`() async {
        final class WorkRound: Sendable {
            let request = CancellationRequest()
            let ran = Counter()
            let calls = Counter()
            let future = Locked<Future<Int>?>(nil)
        }
        let failures = await race(
            iterations: Stress.cheap,
            setup: { WorkRound() },
            actions: [
                { round in
                    let future = Future(on: .synchronous, cancellationToken: round.request.token) {
                        round.ran.increment()
                        return 1
                    }
                    future.onComplete(on: .synchronous) { _ in round.calls.increment() }
                    round.future.withLock { $0 = future }
                },
                { $0.request.cancel() },
            ],
            check: { round in
                guard let result = round.future.value?.result else { return "pending" }
                guard round.calls.value == 1, round.ran.value <= 1 else {
                    return "calls \(round.calls.value), ran \(round.ran.value)"
                }
                // Cancelled before the work started: the work never ran.
                if round.ran.value == 0, !result.isCancellation { return "not run but \(result)" }
                return nil
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `cancelling a continuation racing a dropped promise reaches onFailure exactly once`() async {
        final class DropRound: Sendable {
            let promise = Locked<Promise<Int>?>(Promise<Int>())
            let request = CancellationRequest()
            let errors = Locked<[String]>([])
        }
        let failures = await race(
            iterations: Stress.cheap,
            setup: {
                let round = DropRound()
                round.promise.value!.future.onFailure(on: .synchronous, cancellationToken: round.request.token) {
                    error in
                    round.errors.withLock {
                        $0.append(
                            error is CancellationError
                                ? "cancelled" : error as? FutureError == .brokenPromise ? "brokenPromise" : "\(error)"
                        )
                    }
                }
                return round
            },
            actions: [
                { @Sendable round in round.promise.withLock { $0 = nil } },
                { @Sendable round in round.request.cancel() },
            ],
            check: { round in
                let errors = round.errors.value
                return errors == ["cancelled"] || errors == ["brokenPromise"] ? nil : "errors \(errors)"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }
}
