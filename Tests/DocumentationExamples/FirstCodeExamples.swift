import FutureLib
import Synchronization
import TestSupport
import Testing

// The first code a user writes for this round's features, as the guides show it, compiled in Swift 6
// mode and run: a main-actor view model over stream operators (Documentation/Streams.md, "On the
// main actor"), an actor that sizes its calls from a token's time left (Documentation/Cancellation.md,
// "Deadlines: what a token has left") and a deadline test on a ManualClock (Documentation/Testing.md,
// "advance(by:): fire what is due, wait for nothing").

// MARK: - A view model on the main actor

/// The distinct searches typed so far. The operators' closures are `@MainActor`, so they read and
/// write the model's state directly: no `MainActor.assumeIsolated`, no `@unchecked Sendable`.
@MainActor final class SearchHistoryModel {
    var ignoresCase = true
    private(set) var history: [String] = []

    func show(_ queries: FutureStream<String>, cancellationToken token: CancellationToken) {
        queries
            .removeDuplicates(on: .mainActor) { previous, next in  // reads main-actor state
                self.ignoresCase ? previous.lowercased() == next.lowercased() : previous == next
            }
            .scan([String](), on: .mainActor) { history, query in history + [query] }
            .onSuccess(on: .mainActor, cancellationToken: token) { self.history = $0 }
    }
}

// MARK: - An actor that reads a token's deadline

/// The timeout an actor sends with each upstream call: its own ceiling, or what the caller has
/// left when that is less.
actor UpstreamTimeouts {
    let ceiling: Duration
    private(set) var sent: [Duration] = []

    init(ceiling: Duration) {
        self.ceiling = ceiling
    }

    func timeout(for token: CancellationToken) throws -> Duration {
        try token.checkCancellation()
        let timeout = min(ceiling, token.timeRemaining ?? ceiling)  // nil: no timer can cancel it
        sent.append(timeout)
        return timeout
    }
}

@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct FirstCodeExamples {
    @Test @MainActor
    func `a main-actor view model removes duplicates and scans on the main actor, until its token`() async {
        let model = SearchHistoryModel()
        let queries = StreamPromise<String>(capacity: 0)
        let stop = CancellationRequest()
        model.show(queries.stream, cancellationToken: stop.token)
        for query in ["swift", "Swift", "swifty", "swifty"] { queries.fulfill(query) }
        #expect(await eventuallyOnMainActor { model.history == ["swift", "swifty"] })

        model.ignoresCase = false  // the next comparison reads the new setting
        queries.fulfill("Swifty")
        #expect(await eventuallyOnMainActor { model.history == ["swift", "swifty", "Swifty"] })

        stop.cancel()  // unsubscribed at once: no value sent after this reaches the model
        queries.fulfill("rust")
        try? await Task.sleep(for: .milliseconds(20))  // turns of the main actor for a wrong delivery
        #expect(model.history == ["swift", "swifty", "Swifty"])
    }

    @Test func `an actor sends the smaller of its ceiling and the caller's time left`() async throws {
        let clock = ManualClock()
        let timeouts = UpstreamTimeouts(ceiling: .seconds(2))
        let inbound = CancellationRequest(cancelAfter: .milliseconds(300), clock: clock)
        clock.advance(by: .milliseconds(120))
        #expect(try await timeouts.timeout(for: inbound.token) == .milliseconds(180))  // exact on a ManualClock
        #expect(try await timeouts.timeout(for: .none) == .seconds(2))  // no deadline: the ceiling

        let longer = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
        #expect(try await timeouts.timeout(for: longer.token) == .seconds(2))
        longer.cancel(after: .seconds(1), clock: clock)  // re-arming moves the deadline
        #expect(try await timeouts.timeout(for: longer.token) == .seconds(1))

        clock.advance(by: .milliseconds(180))  // the inbound deadline passes
        #expect(inbound.token.cancellationReason is DeadlineExceededError)
        #expect(inbound.token.timeRemaining == .zero)  // nothing left, not "no deadline"
        await #expect(throws: CancellationError.self) { try await timeouts.timeout(for: inbound.token) }
        #expect(await timeouts.sent == [.milliseconds(180), .seconds(2), .seconds(2), .seconds(1)])
    }

    @Test func `a deadline on a ManualClock fires inside advance(by:), called from an async test`() async throws {
        let clock = ManualClock()
        let deadline = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
        let fired = Atomic(false)
        deadline.token.onCancel { fired.store(true, ordering: .relaxed) }
        let pending = Promise<Int>()  // kept: a dropped promise fails its future at once (brokenPromise)
        let reply = pending.future.timeout(after: .seconds(5), clock: clock, on: .synchronous)
        #expect(!reply.isCompleted)

        clock.advance(by: .seconds(5))  // synchronous, no await: the timeout fired before it returned
        #expect(reply.isCompleted)
        await #expect(throws: FutureError.timeout) { try await reply.value() }
        #expect(deadline.token.timeRemaining == .seconds(25))

        clock.advance(by: .seconds(25) - .nanoseconds(1))  // due at its deadline, not an instant before
        #expect(!deadline.isCancellationRequested)
        clock.advance(by: .nanoseconds(1))
        let ranInside = fired.load(ordering: .relaxed)
        #expect(ranInside)  // its handler ran inside advance(by:)
        #expect(deadline.token.cancellationReason is DeadlineExceededError)
        #expect(clock.pendingTimerCount == 0)
    }
}

/// Gives the main actor turns until `condition` holds (a minute at most).
@MainActor private func eventuallyOnMainActor(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<60_000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}
