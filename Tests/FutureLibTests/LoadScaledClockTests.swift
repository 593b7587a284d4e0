import FutureTestSupport
import TestSupport
import Testing

/// The watchdogs of the test suite (`HangLimit`, `stopIfStuck(after:)`) stretch with the machine's
/// load, so that a slow run on a busy machine is not reported as a hang; but never without bound,
/// so that a real hang, which may itself keep the load up, is still reported.
@Suite struct LoadScaledClockTests {
    @Test(arguments: [-1.0, 0, 0.5, 1, .nan, -.infinity])
    func `a quiet machine, or a load that is not a number, counts each second as one`(load: Double) {
        #expect(LoadScaledClock.slowdown(loadPerProcessor: load) == 1)
    }

    @Test func `a loaded machine counts a second for less, in proportion to its load`() {
        #expect(LoadScaledClock.slowdown(loadPerProcessor: 3) == 3)
    }

    @Test(arguments: [LoadScaledClock.maximumSlowdown, 1_000, 1e300, .infinity])
    func `however high the load, a watchdog waits at most maximumSlowdown times as long`(load: Double) {
        #expect(LoadScaledClock.slowdown(loadPerProcessor: load) == LoadScaledClock.maximumSlowdown)
    }

    @Test func `a suite's time limit is bounded whatever the load when the run started`() {
        let limit = HangLimit.minutes(3)
        #expect(limit >= 3)
        #expect(limit <= Stress.override.map { _ in 3 * 40 } ?? Int(3 * 2 * LoadScaledClock.maximumSlowdown))
    }
}
