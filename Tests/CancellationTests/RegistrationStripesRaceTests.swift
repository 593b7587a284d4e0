import Cancellation
import Synchronization
import TestSupport
import Testing

/// Races on a token with per-processor stripes (`RegistrationStripes`, forced with
/// `stripeRegistrations()`): real threads released together each round (see `race`), as in
/// `RaceTests`. `make stress` runs them with more rounds.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct RegistrationStripesRaceTests {
    final class StripedRound: Sendable {
        let request = CancellationRequest()
        let runs = Counter()
        let unregistered = Atomic<Bool>(false)

        init() {
            _ = request.token.stripeRegistrations()
        }
    }

    @Test
    func
        `Race: striped register + unregister vs cancel: exactly one of "unregister returned true" and "handler ran"`()
        async
    {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { StripedRound() },
            actions: [
                { $0.request.cancel() },
                { round in
                    let runs = round.runs
                    let registration = round.request.token.onCancel { runs.increment() }
                    round.unregistered.store(registration.unregister(), ordering: .releasing)
                },
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

    /// Three threads register (one in each of two stripes, one on its processor's), unregister every
    /// other handler and check each unregistered one never runs, while a fourth cancels.
    final class ManyRound: Sendable {
        let request = CancellationRequest()
        /// Per handler: how many times it ran (handler `t * 10 + i` of thread `t`).
        let runs = (0..<30).map { _ in Counter() }
        /// Per handler: 1 when `unregister()` returned true.
        let removed = (0..<30).map { _ in Counter() }

        init() {
            _ = request.token.stripeRegistrations()
        }

        func work(thread: Int) {
            let token = request.token
            for index in 0..<10 {
                let handler = thread * 10 + index
                let runs = runs[handler]
                let registration =
                    thread == 2
                    ? token.onCancel { runs.increment() }
                    : token.onCancel(inStripe: thread) { runs.increment() }
                if index.isMultiple(of: 2), registration.unregister() { removed[handler].increment() }
            }
        }
    }

    @Test
    func `Race: several threads register and unregister on a striped token vs cancel: no handler lost, none twice`()
        async
    {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { ManyRound() },
            actions: [
                { $0.request.cancel() },
                { $0.work(thread: 0) },
                { $0.work(thread: 1) },
                { $0.work(thread: 2) },
            ],
            check: { round in
                for handler in 0..<30 {
                    let ran = round.runs[handler].value
                    let removed = round.removed[handler].value == 1
                    if ran > 1 { return "handler \(handler) ran \(ran) times" }
                    if removed && ran != 0 { return "handler \(handler) ran after unregister returned true" }
                    if !removed && ran != 1 { return "handler \(handler) was lost" }
                }
                return round.request.token.registrationCount == 0 ? nil : "handlers left after cancel"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    final class StripingRound: Sendable {
        let request = CancellationRequest()
        let runs = Counter()
    }

    @Test func `Race: the request gets its stripes while threads register and cancel: every handler runs once`() async {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { StripingRound() },
            actions: [
                { round in _ = round.request.token.stripeRegistrations() },
                { round in
                    let runs = round.runs
                    for _ in 0..<5 { round.request.token.onCancel { runs.increment() } }
                },
                { round in
                    let runs = round.runs
                    for _ in 0..<5 { round.request.token.onCancel { runs.increment() } }
                    round.request.cancel()
                },
            ],
            check: { round in round.runs.value == 10 ? nil : "\(round.runs.value) of 10 handlers ran" }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test
    func `Race: unregisterAndWait on a striped handler vs cancel: when it returns the handler finished or never runs`()
        async
    {
        let failures = await raceUnregisterAndWaitVsCancel(iterations: Stress.cheap) {
            UnregisterAndWaitRound { token, handler in
                _ = token.stripeRegistrations()
                return token.onCancel(inStripe: 1, handler)
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    final class ReleaseRound: Sendable {
        let request = Mutex<CancellationRequest?>(CancellationRequest())
        let token: CancellationToken
        let deinits = DeinitCounter()
        let registered = Counter()

        init() {
            token = request.withLock { $0!.token }
            _ = token.stripeRegistrations()
        }
    }

    @Test func `Race: striped registrations vs the request's release: every handler is released, none runs`() async {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { ReleaseRound() },
            actions: [
                { round in
                    let request = round.request.withLock { request in
                        defer { request = nil }
                        return request
                    }
                    _ = consume request  // the last reference: released here, racing the registrations
                },
                { round in
                    for index in 0..<5 {
                        let tracked = round.deinits.make()
                        round.token.onCancel(inStripe: index) { tracked.touch() }
                        round.registered.increment()
                    }
                },
            ],
            check: { round in
                if round.token.registrationCount != 0 { return "\(round.token.registrationCount) handlers kept" }
                let released = round.deinits.deallocated
                return released == 5 ? nil : "\(released) of 5 handlers released"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    final class TimerRound: Sendable {
        let clock = ManualClock()
        let request = Mutex<CancellationRequest?>(CancellationRequest())
        let token: Mutex<CancellationToken?>
        let deinits = DeinitCounter()
        let runs = Counter()

        init() {
            let token = request.withLock { $0!.token }
            _ = token.stripeRegistrations()
            self.token = Mutex(token)
        }
    }

    /// The timer lets the stripes go of their owners (`StripeOwner`) while registrations take them:
    /// whichever comes first, once the request, its token and every registration are gone, nothing
    /// keeps the handlers or the timer.
    @Test
    func
        `Race: a timer armed on a striped request vs registrations dropped at once: all released once nothing observes it`()
        async
    {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { TimerRound() },
            actions: [
                { round in
                    round.request.withLock { $0!.cancel(after: .seconds(10), clock: round.clock) }
                },
                { round in
                    guard let token = round.token.withLock({ $0 }) else { return }
                    for index in 0..<5 {
                        let tracked = round.deinits.make()
                        let runs = round.runs
                        token.onCancel(inStripe: index) {
                            tracked.touch()
                            runs.increment()
                        }
                    }
                },
            ],
            check: { round in
                round.request.withLock { $0 = nil }
                round.token.withLock { $0 = nil }
                let released = round.deinits.deallocated
                if released != 5 { return "\(released) of 5 handlers released" }
                if round.clock.pendingTimerCount != 0 { return "the timer is still pending" }
                round.clock.advance(by: .seconds(10))
                return round.runs.value == 0 ? nil : "\(round.runs.value) handlers ran"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }
}
