package import Cancellation
extension ManualClock {
    /// The synchronous `advance(by:)`, from async code too (where Swift picks the async overload,
    /// which also waits for FutureLib's contexts to settle): fires what comes due, on this thread,
    /// before it returns.
    package func advanceNow(by duration: Duration) {
        advance(by: duration)
    }
}
