import Cancellation
import TestSupport
import Testing

/// `SystemClock`'s own members (its timers are tested through the requests that arm them).
@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct SystemClockTests {
    /// The count is process-wide and other tests arm and stop system timers in parallel, so only what
    /// this test's own timers guarantee is asserted: while they are pending, the count includes them.
    @Test func `pendingTimerCount counts every armed system timer of the process`() {
        let clock = SystemClock()
        let timers = (0..<1_000).map { _ in clock.makeTimer(after: .seconds(3_600)) {} }
        #expect(clock.pendingTimerCount >= timers.count)
        let requests = (0..<1_000).map { _ in CancellationRequest(cancelAfter: .seconds(3_600)) }
        #expect(SystemClock().pendingTimerCount >= timers.count + requests.count)
        for timer in timers { timer.cancel() }
        for request in requests { request.cancel() }
    }
}
