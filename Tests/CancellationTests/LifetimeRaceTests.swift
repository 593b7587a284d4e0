import Cancellation
import Foundation
import FutureLibConcurrencyHelpers
import Synchronization
import TestSupport
import Testing

/// Races between the last observer of a request going away and what can still cancel it: a source
/// of a linked request cancelling, a source being deallocated, a timer firing. Each handler runs at
/// most once, nothing crashes, and nothing is left on the sources. `make stress` repeats them
/// (`--filter Race`); run them under `make tsan` and `make asan` after changing lifetimes.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct LifetimeRaceTests {
    /// The last token of a request and a registration on it, which counts the handler's runs and
    /// tracks its release: what every round drops while something else cancels the request.
    final class Observers: Sendable {
        private let held: Lock<(CancellationToken, CancellationRegistration)?>
        let runs = Counter()
        let released = DeinitCounter()

        init(_ token: CancellationToken) {
            let tracked = released.make()
            let runs = runs
            let registration = token.onCancel {
                tracked.touch()
                runs.increment()
            }
            held = Lock((token, registration))
        }

        /// Drops the last token and registration, outside the lock (the core's `deinit` runs here).
        func drop() {
            let held = held.withLock { $0.take() }
            _ = consume held
        }

        /// What went wrong: the handler ran more than `maxRuns` times, or it was not released;
        /// nil when neither.
        func failure(maxRuns: Int = 1) -> String? {
            let ran = runs.value
            if ran > maxRuns { return "ran \(ran) times" }
            if released.deallocated != 1 { return "the handler was not released" }
            return nil
        }
    }

    /// The last token and registration of a linked request, dropped by one thread while another
    /// cancels (or deallocates) the source.
    final class LinkedRound: Sendable {
        let source = Lock<CancellationRequest?>(CancellationRequest())
        let sourceToken: CancellationToken
        let observers: Observers

        init() {
            sourceToken = source.withLock { $0!.token }
            // The request itself is dropped at once: only its token and a registration observe it.
            observers = Observers(CancellationRequest(linkedTo: [sourceToken]).token)
        }

        func dropSource() {
            let source = source.withLock { $0.take() }
            _ = consume source
        }

        func cancelSource() {
            source.withLock { $0 }?.cancel()
        }
    }

    @Test func `Race: the last token dropped vs the source cancelling: the handler runs at most once`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { LinkedRound() },
            actions: [{ $0.observers.drop() }, { $0.cancelSource() }],
            check: { round in
                if let failure = round.observers.failure() { return failure }
                if round.sourceToken.registrationCount != 0 { return "the link stayed on the source" }
                return nil
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `Race: the last token dropped vs the source deallocated: nothing runs, everything is released`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { LinkedRound() },
            actions: [{ $0.observers.drop() }, { $0.dropSource() }],
            check: { round in
                round.observers.failure(maxRuns: 0)
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `Race: the source cancelling vs the source deallocated vs the linked token dropped`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { LinkedRound() },
            actions: [{ $0.observers.drop() }, { $0.cancelSource() }, { $0.dropSource() }],
            check: { round in
                round.observers.failure()
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    /// A linked request observed only by its token, with two sources: one cancels while the other
    /// is deallocated. The request is cancelled, never abandoned: the release of one source does
    /// not count the one that fired as gone.
    final class TwoSourceRound: Sendable {
        let cancelling = CancellationRequest()
        let dropped = Lock<CancellationRequest?>(CancellationRequest())
        let token: CancellationToken

        init() {
            let droppedToken = dropped.withLock { $0!.token }
            token = CancellationRequest(linkedTo: [cancelling.token, droppedToken]).token
        }

        func drop() {
            let source = dropped.withLock { $0.take() }
            _ = consume source
        }
    }

    @Test func `Race: one source cancelling vs the other deallocated: the linked request is cancelled`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { TwoSourceRound() },
            actions: [{ $0.cancelling.cancel() }, { $0.drop() }],
            check: { round in
                guard round.token.isCancellationRequested else { return "not cancelled" }
                return nil
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    /// The last token and registration of a request whose timer is about to fire.
    final class TimerRound: Sendable {
        let observers: Observers

        init() {
            observers = Observers(CancellationRequest(cancelAfter: .microseconds(20)).token)
        }
    }

    @Test func `Race: the last token dropped vs the timer firing: the handler runs at most once`() async {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { TimerRound() },
            actions: [{ $0.observers.drop() }],
            check: { round in
                // The timer's thread may still be running the handler: wait until it is released, as
                // long as a loaded machine may keep that thread from running.
                _ = blockUntil { round.observers.released.deallocated != 0 }
                return round.observers.failure()
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    /// The last token and registration of a request whose timer on a manual clock another thread
    /// is about to fire with `advance(by:)`.
    final class ManualTimerRound: Sendable {
        let clock = ManualClock()
        let observers: Observers

        init() {
            observers = Observers(CancellationRequest(cancelAfter: .seconds(1), clock: clock).token)
        }
    }

    @Test func `Race: the last token dropped vs advance(by:) firing the timer: at most once, nothing left`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { ManualTimerRound() },
            actions: [{ $0.observers.drop() }, { $0.clock.advance(by: .seconds(1)) }],
            check: { round in
                if let failure = round.observers.failure() { return failure }
                if round.clock.pendingTimerCount != 0 { return "a timer stayed on the clock" }
                return nil
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    /// A request on a manual clock, re-armed while the clock fires its first deadline.
    final class RearmRound: Sendable {
        let clock = ManualClock()
        let request: CancellationRequest
        let runs = Counter()

        init() {
            request = CancellationRequest(cancelAfter: .seconds(1), clock: clock)
            let runs = runs
            request.token.onCancel { runs.increment() }
        }
    }

    @Test func `Race: re-arming vs advance(by:) firing the timer: the handler runs exactly once`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { RearmRound() },
            actions: [{ $0.clock.advance(by: .seconds(1)) }, { $0.request.cancel(after: .seconds(2)) }],
            check: { round in
                round.clock.advance(by: .seconds(2))  // past every deadline either order could leave
                if round.runs.value != 1 { return "ran \(round.runs.value) times" }
                if round.clock.pendingTimerCount != 0 { return "a timer stayed on the clock" }
                return nil
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }
}
