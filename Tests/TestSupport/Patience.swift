import Foundation

/// How long a test waits for an outcome that is certain to come (a timer's handler on Dispatch's
/// thread, a job on the pool, a value another thread publishes): a bound that tells a hang from a
/// slow run, never a measurement.
///
/// A fixed wall-clock bound turns a busy machine into a failure: a thread that must run for the
/// outcome may get no processor for seconds beside other builds and sanitizer runs. Each bound
/// here is counted in seconds of a quiet machine, on ``LoadScaledClock``: each wall-clock second
/// counts for less while the machine is loaded, at most ``LoadScaledClock/maximumSlowdown`` times
/// less, so that a real hang still fails in bounded time.
package struct LoadScaledDeadline {
    private let seconds: Double
    private var counted = 0.0
    private var last = ContinuousClock.now
    private var slowdown = LoadScaledClock.slowdown
    private var slowdownRead = ContinuousClock.now

    /// A deadline `seconds` of a quiet machine from now.
    package init(seconds: Int) {
        self.seconds = Double(seconds)
    }

    /// Whether the deadline has passed: the wall-clock time since the last call is counted at the
    /// load now (read at most every tenth of a second: it is a file read on Linux).
    package mutating func hasPassed() -> Bool {
        let now = ContinuousClock.now
        if now - slowdownRead > .milliseconds(100) {
            slowdown = LoadScaledClock.slowdown
            slowdownRead = now
        }
        let (wholeSeconds, attoseconds) = (now - last).components
        counted += (Double(wholeSeconds) + Double(attoseconds) / 1e18) / slowdown
        last = now
        return counted >= seconds
    }
}

/// Blocks the calling (dedicated) thread until `condition` holds or `seconds` of a quiet machine
/// have passed (``LoadScaledDeadline``); returns whether it holds. It yields its processor first,
/// for an outcome another thread is about to publish, and then sleeps between checks, so that it
/// does not take the processor from the thread it waits for.
package func blockUntil(seconds: Int = 120, _ condition: () -> Bool) -> Bool {
    var deadline = LoadScaledDeadline(seconds: seconds)
    var checks = 0
    while !condition() {
        if deadline.hasPassed() { return condition() }
        checks += 1
        if checks < 1_000 { sched_yield() } else { pause(.microseconds(200)) }
    }
    return true
}

extension HangLimit {
    /// A timeout for a library wait that is meant to end before it (`wait(timeout:)`,
    /// `value(timeout:)` of a value that is certain to come): `duration` of a quiet machine, times
    /// ``LoadScaledClock/maximumSlowdown``. Such a wait returns as soon as its outcome comes, so
    /// the longer bound costs nothing unless the test fails; a library wait cannot be counted on
    /// ``LoadScaledClock`` as it goes, hence the largest slowdown a load may cause.
    package static func timeout(_ duration: Duration) -> Duration {
        duration * LoadScaledClock.maximumSlowdown
    }
}
