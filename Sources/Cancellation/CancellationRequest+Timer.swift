package import Dispatch

extension CancellationRequest {
    /// Creates a request that cancels itself after `delay`, measured on `clock`.
    ///
    /// The timer starts now. Until it fires it keeps the request cancellable while something can
    /// observe it (the request, a copy of its token, or a registration on it), so the token alone
    /// is enough:
    ///
    /// ```swift
    /// let token = CancellationRequest(cancelAfter: .seconds(5)).token
    /// let page = try await fetch(url, cancellationToken: token)  // cancelled if it takes over 5 s
    /// ```
    ///
    /// When the timer fires, the request is cancelled with ``DeadlineExceededError`` as its reason.
    /// A delay of zero or less cancels the request before `init` returns. Once the request and
    /// every token and registration of it are gone, the timer is stopped and released at once.
    ///
    /// ### Clock
    /// The request keeps `clock` for ``cancel(after:)``. In tests, a ``ManualClock`` makes the
    /// deadline instant and exact:
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let request = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
    /// clock.advance(by: .seconds(30))
    /// #expect(request.isCancellationRequested)
    /// ```
    ///
    /// - Parameters:
    ///   - delay: How long until cancellation. Negative delays count as zero.
    ///   - clock: The clock that measures `delay`. Defaults to ``TimerClock/system``.
    public convenience init(cancelAfter delay: Duration, clock: some TimerClock = .system) {
        self.init()
        cancel(after: delay, clock: clock)
    }

    /// Arms, or re-arms, a timer that cancels this request after `delay`, on the request's clock.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// request.cancel(after: .seconds(30))  // an idle timeout...
    /// request.cancel(after: .seconds(30))  // ...pushed back on activity: the last call wins
    /// ```
    ///
    /// The request's clock is the one its timer was armed on (``init(cancelAfter:clock:)`` or
    /// ``cancel(after:clock:)``), or ``TimerClock/system`` when it has none yet.
    ///
    /// ### Semantics
    /// - A later call replaces the pending deadline, earlier or later: the last call wins.
    /// - After the request is cancelled it does nothing.
    /// - The timer cancels with ``DeadlineExceededError`` as the reason.
    /// - A delay of zero or less cancels at once, on this thread. Negative delays count as zero.
    /// - On the system clock the timer fires on FutureLib's serial timer queue, which has a
    ///   thread of its own (not the cooperative pool, not `DispatchQueue.global()`), and runs the
    ///   handlers there: keep them short, a slow handler delays the timers behind it. On a
    ///   ``ManualClock`` it fires inside ``ManualClock/advance(by:)``.
    /// - A pending timer keeps the request cancellable while the request, a copy of its token or
    ///   a registration on it is alive, never longer: once they are all gone, it is stopped and
    ///   released at once. ``cancel()`` stops it too.
    ///
    /// - Parameter delay: How long from now until cancellation.
    public func cancel(after delay: Duration) {
        guard delay > .zero else {
            cancel(reason: BoxedErrors.deadlineExceeded)
            return
        }
        core.arm(after: delay, on: nil)
    }

    /// Arms, or re-arms, a timer that cancels this request after `delay`, measured on `clock`.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let request = CancellationRequest()
    /// request.cancel(after: .seconds(5), clock: clock)
    /// request.cancel(after: .seconds(10))  // re-armed on the same clock
    /// clock.advance(by: .seconds(10))
    /// #expect(request.isCancellationRequested)
    /// ```
    ///
    /// Exactly like ``cancel(after:)``, and `clock` becomes the request's clock: a pending
    /// timer on another clock is stopped and replaced.
    ///
    /// - Parameters:
    ///   - delay: How long from now until cancellation. Negative delays count as zero.
    ///   - clock: The clock that measures `delay`.
    public func cancel(after delay: Duration, clock: some TimerClock) {
        guard delay > .zero else {
            cancel(reason: BoxedErrors.deadlineExceeded)
            return
        }
        core.arm(after: delay, on: clock)
    }
}

extension Duration {
    /// This duration as whole nanoseconds for Dispatch, clamped to what Dispatch can represent.
    /// Negative counts as zero; from about 146 years on (where `DispatchTime.now()` plus it could
    /// leave Dispatch's range) it is `.never`. Compared before `components`, which traps past
    /// `.seconds(Int64.max)`.
    package var dispatchInterval: DispatchTimeInterval {
        guard self > .zero else { return .nanoseconds(0) }
        guard self < .seconds(Int64(Int.max / 1_000_000_000) / 2) else { return .never }
        let (seconds, attoseconds) = components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
