import Cancellation
import TestSupport
import Testing

/// `TimerClock.sleep(for:)`: a sleep that a `ManualClock` moves, and that resumes from the clock's
/// timer rather than through Swift's global executor.
@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct TimerClockSleepTests {
    @Test func `a sleep on a manual clock ends inside the advance that reaches it`() async throws {
        let clock = ManualClock()
        let woke = Counter()
        let sleeper = Task {
            try await clock.sleep(for: .seconds(5))
            woke.increment()
        }
        await clock.waitForPendingTimers()
        clock.advance(by: .seconds(4))
        #expect(woke.value == 0)
        clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(woke.value == 1)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `cancelling a sleeping task throws CancellationError and stops the timer`() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(5)) }
        await clock.waitForPendingTimers()
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `a task cancelled before it sleeps throws without arming a timer`() async {
        let clock = ManualClock()
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(5))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `a sleep of zero or less waits for the next advance`() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(-1)) }
        await clock.waitForPendingTimers()
        clock.advance(by: .zero)
        try await sleeper.value
    }

    @Test func `a sleep on the system clock resumes`() async throws {
        try await SystemClock().sleep(for: .milliseconds(1))
        try await SystemClock.system.sleep(for: .zero)
    }

    @Test func `sleeps on one clock end in deadline order`() async throws {
        let clock = ManualClock()
        let order = Locked<[Int]>([])
        let sleepers = [3, 1, 2].map { seconds in
            Task {
                try await clock.sleep(for: .seconds(seconds))
                order.withLock { $0.append(seconds) }
            }
        }
        await clock.waitForPendingTimers(3)
        for _ in 1...3 {
            let done = order.value.count
            clock.advance(by: .seconds(1))
            #expect(await eventually { order.value.count == done + 1 })
        }
        for sleeper in sleepers { try await sleeper.value }
        #expect(order.value == [1, 2, 3])
    }
}
