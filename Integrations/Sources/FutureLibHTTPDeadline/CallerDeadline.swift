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
        // A switch rather than `[delay, remaining].compactMap { $0 }.min()`: no array for every request.
        switch (delay, caller) {
        case (nil, nil): return
        case (let delay?, nil): cancel(after: delay)
        case (nil, let caller?): cancel(after: caller.remaining, clock: caller.clock)
        case (let delay?, let caller?): cancel(after: min(delay, caller.remaining), clock: caller.clock)
        }
    }
}
