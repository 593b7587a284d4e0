package import Cancellation

// What the server adapters' middlewares (FutureLibHummingbird, FutureLibVapor) share: the caller's deadline, read
// from a request's deadline header, and the rule that no deadline a route sets goes past it.

extension DeadlineHeader {
    /// The caller's deadline that `fieldValues` (this header's field lines on a request) say, measured from now on
    /// `clock`; nil when no value is valid (``timeout(in:)``).
    package func callerDeadline(
        in fieldValues: some Sequence<some StringProtocol>,
        clock: some TimerClock = .system
    ) -> CancellationDeadline? {
        guard let timeout = timeout(in: fieldValues) else { return nil }
        return CancellationDeadline(instant: clock.now + timeout, clock: clock)
    }
}

extension CancellationRequest {
    /// Cancels the request with `DeadlineExceededError` `delay` from now, or at `caller` when that is earlier;
    /// replaces a timer armed before (the last call wins). Without either, does nothing.
    ///
    /// The timer runs on `caller`'s clock when there is a caller, else on the system clock. A `caller` that has
    /// passed cancels at once.
    package func cancel(after delay: Duration?, notAfter caller: CancellationDeadline?) {
        // Without a caller's deadline (most requests), its optional is not copied: a copy of a clock in an
        // existential costs more than the rest (`make bench-http-instructions`). No array either, as
        // `[delay, remaining].compactMap { $0 }.min()` would make for every request.
        if caller == nil {
            if let delay { cancel(after: delay) }
        } else if let caller {
            let remaining = caller.remaining
            cancel(after: delay.map { min($0, remaining) } ?? remaining, clock: caller.clock)
        }
    }
}
