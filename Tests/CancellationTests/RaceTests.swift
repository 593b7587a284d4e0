import Cancellation
import Foundation
import FutureLibConcurrencyHelpers
import Synchronization
import TestSupport
import Testing

/// Races between real threads, released together by a spin barrier each round.
///
/// `make stress` runs only these (`--filter Race`) with `FUTURELIB_STRESS_ITERATIONS` raised;
/// by default cheap races run `Stress.cheap` (10,000) rounds and heavy ones `Stress.heavy` (1,000).
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct RaceTests {
    // MARK: - unregister vs cancel

    final class UnregisterRound: Sendable {
        let request = CancellationRequest()
        let runs = Counter()
        let unregistered = Atomic<Bool>(false)
        let registration: CancellationRegistration

        init() {
            let runs = runs
            registration = request.token.onCancel { runs.increment() }
        }
    }

    @Test func `Race: unregister vs cancel: exactly one of "unregister returned true" and "handler ran"`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { UnregisterRound() },
            actions: [
                { $0.request.cancel() },
                { $0.unregistered.store($0.registration.unregister(), ordering: .releasing) },
            ],
            check: { round in
                exactlyOneOfUnregisteredAndRan(
                    ran: round.runs.value,
                    unregistered: round.unregistered.load(ordering: .acquiring)
                )
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    // MARK: - unregisterAndWait vs cancel

    @Test func `Race: unregisterAndWait vs cancel: when it returns the handler has finished or never runs`() async {
        let failures = await raceUnregisterAndWaitVsCancel(iterations: Stress.cheap) {
            UnregisterAndWaitRound { token, handler in token.onCancel(handler) }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    // MARK: - onCancel vs cancel

    final class RegisterRound: Sendable {
        let request = CancellationRequest()
        let runs = Counter()
    }

    @Test func `Race: onCancel vs cancel: the handler runs exactly once`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { RegisterRound() },
            actions: [
                { $0.request.cancel() },
                { round in
                    let runs = round.runs
                    round.request.token.onCancel { runs.increment() }
                },
            ],
            check: { $0.runs.value == 1 ? nil : "ran \($0.runs.value) times" }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    // MARK: - cancel vs cancel

    @Test func `Race: cancel vs cancel: handlers run exactly once`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { () -> RegisterRound in
                let round = RegisterRound()
                let runs = round.runs
                for _ in 0..<3 { round.request.token.onCancel { runs.increment() } }
                return round
            },
            actions: [{ $0.request.cancel() }, { $0.request.cancel() }, { $0.request.cancel() }],
            check: { $0.runs.value == 3 ? nil : "ran \($0.runs.value) handler calls, expected 3" }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    // MARK: - Deallocation vs onCancel

    final class AbandonRound: Sendable {
        let request = Lock<CancellationRequest?>(CancellationRequest())
        let token: CancellationToken
        let runs = Counter()
        let released = DeinitCounter()

        init() {
            token = request.withLock { $0!.token }
        }
    }

    @Test func `Race: deallocation vs onCancel: the handler never runs and is released`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { AbandonRound() },
            actions: [
                { round in
                    let request = round.request.withLock { $0.take() }
                    _ = consume request
                },
                { round in
                    let tracked = round.released.make()
                    let runs = round.runs
                    round.token.onCancel {
                        tracked.touch()
                        runs.increment()
                    }
                },
            ],
            check: { round in
                if round.runs.value != 0 { return "an abandoned request ran a handler" }
                if round.released.deallocated != 1 { return "the handler was not released" }
                if round.token.canBeCancelled { return "canBeCancelled after deallocation" }
                return nil
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    // MARK: - Linked request vs its sources

    final class LinkedRound: Sendable {
        let first = CancellationRequest()
        let second = CancellationRequest()
        let linked: CancellationRequest
        let runs = Counter()

        init() {
            linked = CancellationRequest(linkedTo: [first.token, second.token])
            let runs = runs
            linked.token.onCancel { runs.increment() }
        }
    }

    @Test func `Race: cancelling both sources and the linked request runs its handler exactly once`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { LinkedRound() },
            actions: [{ $0.first.cancel() }, { $0.second.cancel() }, { $0.linked.cancel() }],
            check: { round in
                round.runs.value == 1 && round.linked.isCancellationRequested ? nil : "ran \(round.runs.value) times"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    // MARK: - Many threads: cancel, onCancel, unregister

    /// Per handler: 0 = not registered yet, then how often it ran; and whether unregister returned true.
    final class ManyRound: Sendable {
        static let registrars = 3
        static let handlersPerRegistrar = 40

        let request = CancellationRequest()
        let runs: [Counter] = (0..<(registrars * handlersPerRegistrar)).map { _ in Counter() }
        let unregistered = Locked<[Bool]>(Array(repeating: false, count: registrars * handlersPerRegistrar))
        let released = DeinitCounter()

        /// Registers this thread's handlers and unregisters every other one soon after.
        func work(registrar: Int) {
            var registrations: [(Int, CancellationRegistration)] = []
            for offset in 0..<Self.handlersPerRegistrar {
                let id = registrar * Self.handlersPerRegistrar + offset
                let counter = runs[id]
                let tracked = released.make()
                registrations.append(
                    (
                        id,
                        request.token.onCancel {
                            tracked.touch()
                            counter.increment()
                        }
                    )
                )
                if offset % 4 == 3 {
                    for (id, registration) in registrations where id % 2 == 0 {
                        let removed = registration.unregister()
                        unregistered.withLock { $0[id] = removed }
                    }
                    registrations.removeAll()
                }
            }
        }
    }

    @Test
    func
        `Race: many threads registering, unregistering and cancelling never lose, duplicate or run an unregistered handler`()
        async
    {
        var actions: [@Sendable (ManyRound) -> Void] = (0..<ManyRound.registrars).map { registrar in
            { $0.work(registrar: registrar) }
        }
        actions.append { $0.request.cancel() }
        let failures = await race(
            iterations: Stress.heavy,
            setup: { ManyRound() },
            actions: actions,
            check: { round in
                let unregisteredFlags = round.unregistered.value
                for id in round.runs.indices {
                    let ran = round.runs[id].value
                    let unregistered = unregisteredFlags[id]
                    if unregistered && ran != 0 { return "handler \(id) ran after unregister returned true" }
                    if !unregistered && ran != 1 { return "handler \(id) ran \(ran) times" }
                }
                if round.released.deallocated != round.runs.count { return "a handler was not released" }
                return nil
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    // MARK: - Many threads registering at once

    @Test func `Race: concurrent onCancel from 8 threads loses no handler, and cancel runs each once`() async {
        let request = CancellationRequest()
        let runs: [Counter] = (0..<8).map { _ in Counter() }
        let perThread = 2_000
        let unregisteredPerThread = Locked(Array(repeating: 0, count: 8))
        await onThreads(8) { thread in
            var removed = 0
            for index in 0..<perThread {
                let counter = runs[thread]
                let registration = request.token.onCancel { counter.increment() }
                if index % 3 == 0, registration.unregister() { removed += 1 }
            }
            unregisteredPerThread.withLock { $0[thread] = removed }
        }
        request.cancel()
        for thread in 0..<8 {
            #expect(unregisteredPerThread.value[thread] == (perThread + 2) / 3)
            #expect(runs[thread].value == perThread - unregisteredPerThread.value[thread])
        }
    }

    // MARK: - Timer vs cancel and re-arm

    @Test func `Race: a firing timer vs cancel and re-arm: the handler runs exactly once`() async {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { () -> RegisterRound in
                let round = RegisterRound()
                let runs = round.runs
                round.request.token.onCancel { runs.increment() }
                round.request.cancel(after: .microseconds(1))
                return round
            },
            actions: [{ $0.request.cancel() }, { $0.request.cancel(after: .microseconds(1)) }],
            check: { round in
                // When the timer won, its Dispatch thread (not one of ours) may still be running the
                // handler: cancel() on ours returned at once, as documented. Wait for the outcome, as
                // long as a loaded machine may keep that thread from running.
                _ = blockUntil { round.runs.value != 0 }
                return round.runs.value == 1 ? nil : "ran \(round.runs.value) times"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    // MARK: - wait(timeout:) vs cancel

    @Test func `Race: wait(timeout:) vs cancel: the waiter always sees the cancellation`() async {
        final class Round: Sendable {
            let request = CancellationRequest()
            let result = Atomic<Bool>(false)
        }
        let failures = await race(
            iterations: Stress.heavy,
            setup: { Round() },
            actions: [
                { $0.request.cancel() },
                {
                    $0.result.store(
                        $0.request.token.wait(timeout: HangLimit.timeout(.seconds(10))),
                        ordering: .releasing
                    )
                },
            ],
            check: { $0.result.load(ordering: .acquiring) ? nil : "wait(timeout:) returned false" }
        )
        #expect(failures.isEmpty, "\(failures)")
    }
}
