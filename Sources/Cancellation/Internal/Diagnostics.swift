// Counts for the tests that check that nothing is left behind: on a long-lived source, in the
// timer queue. Each one takes a lock or walks a list; none is meant for production code.

extension CancellationToken {
    /// How many handlers are stored on this token's request right now. O(n).
    package var registrationCount: Int {
        core?.registrationCount ?? 0
    }
}

extension CancellationRequest {
    /// How many timers of the system clock are pending (armed, not yet fired or stopped), process-wide.
    package static var pendingTimerCount: Int {
        SystemClock.pendingTimerCount
    }
}
