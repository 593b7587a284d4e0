import Cancellation
import Dispatch
import FutureLib
import FutureLibConcurrencyHelpers
import FutureTestSupport
import Synchronization
import TestCombinators
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct SequenceFuturesTests {
    // MARK: - traverse

    @Test("traverse keeps input order whatever order the futures complete in")
    func traverseKeepsOrder() async throws {
        let clock = ManualClock()  // the futures complete in a scrambled order, deterministically
        let traversed = Array(0..<20).traverse(on: .synchronous) { index in
            Future(value: index * 2, after: .milliseconds(Int64((20 - index) % 7)), clock: clock)
        }
        await clock.advanceAndSettle(by: .milliseconds(7))
        #expect(try await traversed.value() == (0..<20).map { $0 * 2 })
    }

    @Test(
        "traverse never runs more than maxConcurrency tasks and starts them in input order",
        arguments: [1, 3, 8]
    )
    func traverseRespectsCap(_ cap: Int) async throws {
        let tracker = ConcurrencyTracker()
        let clock = ManualClock()
        let traversed = Array(0..<40).traverse(on: .synchronous, maxConcurrency: cap) { index in
            tracker.started(index)
            return Future(value: index, after: .milliseconds(1), clock: clock)
                .andThen(on: .synchronous) { _ in tracker.finished() }
        }
        // Each completion starts the next task, due 1 ms later: all within the second.
        await clock.advanceAndSettle(by: .seconds(1))
        #expect(try await traversed.value() == Array(0..<40))
        #expect(tracker.peak <= cap)
        #expect(tracker.peak >= 1)
        #expect(tracker.startOrder == Array(0..<40))
    }

    @Test("traverse fails with the first failure in time and then starts no more tasks")
    func traverseStopsOnFailure() async {
        let started = Lock<[Int]>([])
        let clock = ManualClock()
        let failing = Array(0..<100).traverse(on: .synchronous, maxConcurrency: 2) { index -> Future<Int> in
            started.withLock { $0.append(index) }
            return index == 3
                ? Future(error: SampleError(code: 3)) : Future(value: index, after: .milliseconds(1), clock: clock)
        }
        await clock.advanceAndSettle(by: .milliseconds(1))  // 0 and 1 complete, 2 and 3 start; 3 fails at once
        await #expect(throws: SampleError(code: 3)) { try await failing.value() }
        await clock.advanceAndSettle(by: .seconds(1))  // the task still in flight completes: it starts no more
        #expect(started.withLock { $0 } == [0, 1, 2, 3])
    }

    @Test("traverse with a cancelled token fails promptly and starts no more tasks")
    func traverseCancelled() async {
        let request = CancellationRequest()
        let started = CallFlag()
        let gate = Promise<Int>()
        let traversal = Array(0..<10).traverse(on: .synchronous, cancellationToken: request.token, maxConcurrency: 2) {
            _ in
            started.set()
            return gate.future
        }
        #expect(started.count == 2)
        request.cancel()
        #expect(isCancellation(traversal.result))
        gate.fulfill(1)
        #expect(started.count == 2)
        let already = [1, 2].traverse(cancellationToken: .cancelled) { Future(value: $0) }
        #expect(isCancellation(await awaitOutcome(already)))
    }

    @Test("traverse of an empty sequence succeeds with []")
    func traverseEmpty() async throws {
        #expect(try await [Int]().traverse { Future(value: $0) }.value() == [])
    }

    @Test("traverse over a million elements with a cap completes")
    func traverseMillion() async throws {
        let result = await onDedicatedThread {  // seconds of synchronous work: off the cooperative pool
            Array(0..<Scale.million).traverse(on: .synchronous, maxConcurrency: 64) { Future(value: $0 & 1) }.result
        }
        #expect(try result?.get().count == Scale.million)
    }

    // MARK: - sequence, results, fold, firstCompleted

    @Test("sequence gives every value in input order, [] for no futures")
    func sequenceInOrder() async throws {
        let promises = (0..<5).map { _ in Promise<Int>() }
        let all = promises.map(\.future).sequence()
        for (index, promise) in promises.enumerated().reversed() { promise.fulfill(index) }
        #expect(try await all.value() == [0, 1, 2, 3, 4])
        #expect(try await [Future<Int>]().sequence().value() == [])
    }

    @Test("sequence, results and zip of inputs completed at once from many threads give every value in order")
    func gatheringFromManyThreads() async throws {
        let rounds = await onHeavyThread { () -> Int in
            var correct = 0
            for _ in 0..<50 {
                let promises = (0..<64).map { _ in Promise<Int>() }
                let futures = promises.map(\.future)
                let all = futures.sequence()
                let results = futures.results()
                let zipped = zip(futures[0], futures[1], futures[2], futures[3], on: .synchronous)
                DispatchQueue.concurrentPerform(iterations: promises.count) { promises[$0].fulfill($0) }
                let values = try? all.result?.get()
                let outcomes = try? results.result?.get().map { try $0.get() }
                let tuple = try? zipped.result?.get()
                if values == Array(0..<64), outcomes == Array(0..<64), let tuple, tuple == (0, 1, 2, 3) {
                    correct += 1
                }
            }
            return correct
        }
        #expect(rounds == 50)
    }

    @Test("sequence fails with the first failure in time without waiting for the rest")
    func sequenceFailsFast() async {
        let pending = Promise<Int>()
        let all = [pending.future, Future(error: SampleError(code: 2)), Future(value: 1)].sequence()
        await #expect(throws: SampleError(code: 2)) { try await all.value() }
        withExtendedLifetime(pending) {}
    }

    @Test("sequence and traverse fail with the earliest failure in time, not the first in input order")
    func earliestFailureInTime() async {
        let inputs = (0..<3).map { _ in Promise<Int>() }
        let all = inputs.map(\.future).sequence()
        let traversed = [0, 1, 2].traverse(on: .synchronous) { inputs[$0].future }
        inputs[2].reject(SampleError(code: 2))  // the last input fails first
        inputs[1].reject(SampleError(code: 1))
        await #expect(throws: SampleError(code: 2)) { try await all.value() }
        await #expect(throws: SampleError(code: 2)) { try await traversed.value() }
        withExtendedLifetime(inputs) {}
    }

    @Test("results gives every result in input order and never fails unless cancelled")
    func resultsInOrder() async throws {
        let results = try await [Future(value: 1), Future(error: SampleError()), Future(value: 3)].results().value()
        #expect(results.count == 3)
        #expect(try results[0].get() == 1)
        #expect(!results[1].isSuccess)
        #expect(try results[2].get() == 3)
        #expect(try await [Future<Int>]().results().value().isEmpty)
        let pending = Promise<Int>()
        let request = CancellationRequest()
        let cancelled = [pending.future].results(cancellationToken: request.token)
        request.cancel()
        #expect(isCancellation(cancelled.result))
        withExtendedLifetime(pending) {}
    }

    @Test("fold calls combine in input order; empty gives initial")
    func foldInOrder() async throws {
        let promises = (0..<4).map { _ in Promise<String>() }
        let folded = promises.map(\.future).fold(initial: "") { $0 + $1 }
        for (index, promise) in promises.enumerated().reversed() { promise.fulfill("\(index)") }
        #expect(try await folded.value() == "0123")
        #expect(try await [Future<Int>]().fold(initial: 7) { $0 + $1 }.value() == 7)
        await #expect(throws: SampleError()) {
            try await [Future(value: 1), Future(error: SampleError())].fold(initial: 0) { $0 + $1 }.value()
        }
    }

    @Test("firstCompleted gives the first result in time; none fails with noSuchElement")
    func firstCompletedWins() async throws {
        let slow = Promise<Int>()
        let fast = Promise<Int>()
        let first = [slow.future, fast.future].firstCompleted()
        fast.fulfill(2)
        slow.fulfill(1)
        #expect(try await first.value() == 2)
        let never = Promise<Int>()
        let failingFirst = [never.future, Future(error: SampleError(code: 5))].firstCompleted()
        await #expect(throws: SampleError(code: 5)) { try await failingFirst.value() }
        withExtendedLifetime(never) {}
        await #expect(throws: FutureError.noSuchElement) { try await [Future<Int>]().firstCompleted().value() }
    }

    // MARK: - firstSuccess

    @Test("firstSuccess gives the first success in time, whatever failed before or after it")
    func firstSuccessWins() async throws {
        let inputs = (0..<3).map { _ in Promise<Int>() }
        let first = inputs.map(\.future).firstSuccess()
        inputs[2].reject(SampleError(code: 2))
        inputs[1].fulfill(1)
        inputs[0].fulfill(0)
        #expect(try await first.value() == 1)
        let never = Promise<Int>()
        let completed = [Future(error: SampleError()), never.future, Future(value: 7), Future(value: 8)]
        #expect(completed.firstSuccess().result?.successValue == 7)  // at once: already decided
        let late = Promise<Int>()
        let lateWin = [Future(error: SampleError()), late.future].firstSuccess()
        late.fulfill(3)
        #expect(try await lateWin.value() == 3)
        withExtendedLifetime(never) {}
    }

    @Test("firstSuccess fails with the last failure in time when every input fails; a CancellationError counts")
    func firstSuccessLastFailure() async {
        let inputs = (0..<3).map { _ in Promise<Int>() }
        let none = inputs.map(\.future).firstSuccess()
        inputs[2].reject(SampleError(code: 2))
        inputs[1].reject(CancellationError())
        #expect(!none.isCompleted)
        inputs[0].reject(SampleError(code: 0))  // the first input fails last
        await #expect(throws: SampleError(code: 0)) { try await none.value() }
        let failed = Promise<Int>()
        let cancelledLast = [Future(error: SampleError()), failed.future].firstSuccess()
        failed.reject(CancellationError())  // the last failure, even though it is a cancellation
        #expect(isCancellation(await awaitOutcome(cancelledLast)))
        await #expect(throws: SampleError(code: 9)) {
            try await [Future<Int>(error: SampleError(code: 8)), Future(error: SampleError(code: 9))]
                .firstSuccess().value()
        }
    }

    @Test("firstSuccess of nothing fails with noSuchElement")
    func firstSuccessEmpty() async {
        await #expect(throws: FutureError.noSuchElement) { try await [Future<Int>]().firstSuccess().value() }
    }

    @Test("firstSuccess given a cancelled token fails promptly and leaves nothing on the pending inputs")
    func firstSuccessCancelled() async {
        for alreadyCancelled in [true, false] {
            let inputs = (0..<3).map { _ in Promise<Int>() }
            let request = CancellationRequest()
            if alreadyCancelled { request.cancel() }
            let probe = { () -> WeakProbe<Future<Int>> in
                let first = inputs.map(\.future).firstSuccess(cancellationToken: request.token)
                if !alreadyCancelled {
                    inputs[0].reject(SampleError())
                    #expect(!first.isCompleted)
                    request.cancel()
                }
                #expect(isCancellation(first.result))  // promptly: inputs 1 and 2 still pending
                return WeakProbe(first)
            }()
            #expect(!probe.isAlive)  // the pending inputs do not hold it
            for input in inputs.dropFirst() {
                #expect(input.future.debugDescription.hasSuffix("; 0 continuations waiting)"))
                input.fulfill(1)
            }
        }
    }

    @Test("a completed firstSuccess leaves nothing on the inputs still pending, nor on its token")
    func firstSuccessReleasesPendingInputs() {
        let pending = Promise<Int>()
        let request = CancellationRequest()
        let probes = { () -> [WeakProbe<Future<Int>>] in
            let decided = Promise<Int>()
            let won = [pending.future, decided.future].firstSuccess(cancellationToken: request.token)
            let lost = [pending.future, decided.future].firstSuccess()
            decided.fulfill(1)
            #expect(won.result?.successValue == 1)
            #expect(lost.result?.successValue == 1)
            let already = [pending.future, Future(value: 2)].firstSuccess(cancellationToken: request.token)
            #expect(already.result?.successValue == 2)
            return [WeakProbe(won), WeakProbe(lost), WeakProbe(already)]
        }()
        #expect(probes.allSatisfy { !$0.isAlive })
        #expect(pending.future.debugDescription.hasSuffix("; 0 continuations waiting)"))
        #expect(request.token.debugDescription.contains("; 0 handlers registered;"))
    }

    @Test("firstSuccess of a hundred thousand inputs that all fail completes with the last failure")
    func firstSuccessScale() async {
        let count = Scale.hundredThousand
        let (pendingLast, failedFirst) = await onHeavyThread { () -> (Int?, Int?) in
            // O(n²) (a scan of the inputs per failure) would be 10¹⁰ steps here: the time limit.
            let promises = (0..<count).map { _ in Promise<Int>() }
            let pending = promises.map(\.future).firstSuccess()
            for (index, promise) in promises.enumerated().reversed() { promise.reject(SampleError(code: index)) }
            let failed = (0..<count).map { Future<Int>(error: SampleError(code: $0)) }
            return (pending.result?.sampleCode, failed.firstSuccess().result?.sampleCode)
        }
        #expect(pendingLast == 0)
        #expect(failedFirst == count - 1)
    }

    @Test(
        "firstSuccess racing completions on several threads completes once, with a success if there is one",
        arguments: FirstSuccessRound.Case.allCases
    )
    func firstSuccessRace(_ raceCase: FirstSuccessRound.Case) async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { FirstSuccessRound(token: raceCase == .cancel) },
            actions: (0..<3).map { thread in { @Sendable round in round.act(thread, in: raceCase) } },
            check: { round in
                guard round.calls.value == 1, let outcome = round.outcome.value else {
                    return "completed \(round.calls.value) times"
                }
                guard raceCase.allows(outcome) else { return "unexpected \(outcome)" }
                // In `.cancel` the third input stays pending: the decided race left nothing on it.
                let third = round.inputs[2].future.debugDescription
                return raceCase != .cancel || third.hasSuffix("; 0 continuations waiting)") ? nil : third
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    // MARK: - A cancelled token

    @Test(
        "sequence, results, fold and firstCompleted given a cancelled token fail promptly, and fold never combines",
        arguments: [FutureCombinator.sequence, .results, .fold, .firstCompleted]
    )
    func gatherCancelledPromptly(_ helper: FutureCombinator) async {
        for alreadyCancelled in [true, false] {
            let inputs = (0..<3).map { _ in Promise<Int>() }
            let request = CancellationRequest()
            if alreadyCancelled { request.cancel() }
            let combined = CallFlag()
            let futures = inputs.map(\.future)
            let token = request.token
            let gathered: Future<Int> =
                switch helper {
                case .sequence: futures.sequence(cancellationToken: token).map(on: .synchronous) { $0.count }
                case .results: futures.results(cancellationToken: token).map(on: .synchronous) { $0.count }
                case .fold:
                    futures.fold(on: .synchronous, cancellationToken: token, initial: 0) { total, value in
                        combined.set()
                        return total + value
                    }
                default: futures.firstCompleted(cancellationToken: token)
                }
            if !alreadyCancelled {
                #expect(!gathered.isCompleted)
                request.cancel()
            }
            // Promptly: while every input is still pending.
            #expect(isCancellation(gathered.result))
            for (index, input) in inputs.enumerated() { input.fulfill(index) }
            #expect(isCancellation(await awaitOutcome(gathered)))
            #expect(!combined.isSet)
        }
    }

    @Test("traverse given an already cancelled token starts no task")
    func traverseAlreadyCancelledStartsNothing() async {
        let started = CallFlag()
        let traversal = [1, 2, 3].traverse(on: .synchronous, cancellationToken: .cancelled) { value in
            started.set()
            return Future(value: value)
        }
        #expect(isCancellation(traversal.result))
        #expect(!started.isSet)
    }
}

/// Records how many tasks run at once and in which order they started.
final class ConcurrencyTracker: Sendable {
    private struct State {
        var running = 0
        var peak = 0
        var order: [Int] = []
    }

    private let state = Lock(State())

    func started(_ index: Int) {
        state.withLock {
            $0.running += 1
            $0.peak = max($0.peak, $0.running)
            $0.order.append(index)
        }
    }

    func finished() {
        state.withLock { $0.running -= 1 }
    }

    var peak: Int { state.withLock { $0.peak } }
    var startOrder: [Int] { state.withLock { $0.order } }
}

// MARK: - Async closures and the main actor

extension SequenceFuturesTests {
    @Test func `an async traverse gives its closures' values in input order`() async throws {
        let lengths = ["a", "bb", "ccc"].traverse(maxConcurrency: 2) { text in
            await Task.yield()
            return text.count
        }
        #expect(try await lengths.value() == [1, 2, 3])
    }

    @Test func `traverse and fold accept .mainActor`() async throws {
        @MainActor func isolated() -> Bool {
            MainActor.assertIsolated()
            return true
        }
        let traversed = [1, 2].traverse(on: .mainActor) { value in Future(value: isolated() ? value : 0) }
        #expect(try await traversed.value() == [1, 2])
        let total = [Future(value: 1), Future(value: 2)].fold(on: .mainActor, initial: 0) { sum, value in
            isolated() ? sum + value : 0
        }
        #expect(try await total.value() == 3)
    }
}
