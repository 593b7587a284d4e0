import Cancellation
import Synchronization
import TestSupport

// What `RaceTests` (the request's own list) and `RegistrationStripesRaceTests` (a striped request)
// share for the races of `unregister()` and `unregisterAndWait()` against `cancel()`.

/// The check of "unregister vs cancel": exactly one of "unregister returned true" and "the handler
/// ran" happened, and the handler ran at most once. nil when it holds, else what went wrong.
func exactlyOneOfUnregisteredAndRan(ran: Int, unregistered: Bool) -> String? {
    (ran == 1) != unregistered && ran <= 1 ? nil : "ran \(ran) times, unregister returned \(unregistered)"
}

/// A round of "unregisterAndWait vs cancel": one handler that does a little work, so that
/// `unregisterAndWait()` sometimes catches it running.
final class UnregisterAndWaitRound: Sendable {
    let request = CancellationRequest()
    let started = Counter()
    let finished = Counter()
    let finishedWhenWaitReturned = Atomic<Int>(-1)
    let startedWhenWaitReturned = Atomic<Int>(-1)
    let registration: CancellationRegistration

    /// `register` stores the handler on the request's token (after striping it, for example).
    init(register: (CancellationToken, @escaping @Sendable () -> Void) -> CancellationRegistration) {
        let started = started
        let finished = finished
        registration = register(request.token) {
            started.increment()
            for _ in 0..<50 { _ = started.value }  // a little work, so the handler is sometimes caught running
            finished.increment()
        }
    }
}

/// Races `cancel()` against `unregisterAndWait()` on the rounds `setup` makes: when it returns, the
/// handler has finished or never runs. The failures found (empty when none).
func raceUnregisterAndWaitVsCancel(
    iterations: Int,
    setup: @escaping @Sendable () -> UnregisterAndWaitRound
) async -> [String] {
    await race(
        iterations: iterations,
        setup: setup,
        actions: [
            { $0.request.cancel() },
            { round in
                round.registration.unregisterAndWait()
                round.startedWhenWaitReturned.store(round.started.value, ordering: .relaxed)
                round.finishedWhenWaitReturned.store(round.finished.value, ordering: .releasing)
            },
        ],
        check: { round in
            let started = round.startedWhenWaitReturned.load(ordering: .acquiring)
            let finished = round.finishedWhenWaitReturned.load(ordering: .acquiring)
            if started != finished { return "returned while the handler was running" }
            if round.started.value != started { return "the handler started after unregisterAndWait returned" }
            return nil
        }
    )
}
