package import Dispatch

extension CancellationRequest {
    /// Creates a request that cancels itself after `delay`.
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
    /// A delay of zero or less cancels the request before `init` returns. Once the request and
    /// every token and registration of it are gone, the timer is stopped and released at once.
    ///
    /// - Parameter delay: How long until cancellation. Negative delays count as zero.
    public convenience init(cancelAfter delay: Duration) {
        self.init()
        cancel(after: delay)
    }

    /// Arms, or re-arms, a timer that cancels this request after `delay`.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// request.cancel(after: .seconds(30))  // an idle timeout...
    /// request.cancel(after: .seconds(30))  // ...pushed back on activity: the last call wins
    /// ```
    ///
    /// ### Semantics
    /// - A later call replaces the pending deadline, earlier or later: the last call wins.
    /// - After the request is cancelled it does nothing.
    /// - A delay of zero or less cancels at once, on this thread. Negative delays count as zero.
    /// - The timer fires on FutureLib's serial timer queue, which has a thread of its own (not the
    ///   cooperative pool, not `DispatchQueue.global()`), and runs the handlers there: keep them
    ///   short, a slow handler delays the timers behind it.
    /// - A pending timer keeps the request cancellable while the request, a copy of its token or
    ///   a registration on it is alive, never longer: once they are all gone, it is stopped and
    ///   released at once. ``cancel()`` stops it too.
    ///
    /// - Parameter delay: How long from now until cancellation.
    public func cancel(after delay: Duration) {
        guard delay > .zero else {
            cancel()
            return
        }
        core.arm(at: .now() + delay.dispatchInterval)
    }
}

extension Duration {
    /// This duration as whole nanoseconds for Dispatch, clamped to what Dispatch can represent.
    package var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        guard seconds < Int64(Int.max / 1_000_000_000) - 1 else { return .never }
        guard seconds >= 0, attoseconds >= 0 else { return .nanoseconds(0) }
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
