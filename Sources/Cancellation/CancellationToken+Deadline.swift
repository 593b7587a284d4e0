extension CancellationToken {
    /// The earliest instant at which a timer will cancel this token, if any: Go's `ctx.Deadline()`.
    ///
    /// Its own request's timer (``CancellationRequest/init(cancelAfter:clock:)``,
    /// ``CancellationRequest/cancel(after:)``), or for a linked request the earliest of its own and
    /// its sources' deadlines. A server reads it to pass on what is left of its caller's budget:
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let request = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
    /// clock.advance(by: .seconds(12))
    /// #expect(request.token.deadline?.remaining == .seconds(18))
    /// request.cancel(after: .seconds(5))  // re-armed: the deadline moves
    /// #expect(request.token.deadline?.remaining == .seconds(5))
    /// ```
    ///
    /// ### Semantics
    /// - nil when no timer can cancel the token: ``none``, a request without a timer and without a
    ///   source that has one, a request that can no longer be cancelled.
    /// - Re-arming moves it (the last call wins), on the timer's clock: it is always the instant the
    ///   timer is scheduled for, read from the timer itself.
    /// - Linked to sources (``CancellationRequest/init(linkedTo:)-([CancellationToken])``): the earliest
    ///   of its own timer's and every source's deadline, read when asked, so re-arming a source moves it.
    ///   Linked to all of them (``CancellationRequest/init(linkedToAll:)``): the latest of the
    ///   sources' deadlines, and none from the links as soon as one source has none (its own timer
    ///   still counts). Sources on different clocks compare by what remains of their deadlines.
    /// - Once cancellation is requested, for whatever reason (``cancelled`` included), the deadline
    ///   has passed: a deadline whose ``CancellationDeadline/remaining`` is `.zero`. A client that
    ///   copies it to the wire sends "no time left", never "no deadline".
    /// - Reading it takes the request's lock and its timer's clock's lock, one after the other, never
    ///   both; for a linked request, those of each request it reaches (in constant stack at any depth).
    ///   A request without a timer pays nothing for this property until it is read.
    public var deadline: CancellationDeadline? {
        core?.deadline
    }

    /// What is left until ``deadline``, never negative: gRPC's "time remaining", what a client
    /// writes on the wire as its timeout.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let request = CancellationRequest(cancelAfter: .milliseconds(300), clock: clock)
    /// clock.advance(by: .milliseconds(120))
    /// #expect(request.token.timeRemaining == .milliseconds(180))  // exact on a ManualClock
    /// #expect(CancellationToken.none.timeRemaining == nil)          // nothing can cancel it by time
    /// ```
    ///
    /// ### Semantics
    /// - `deadline?.remaining`: measured now on the deadline's clock; `.zero` once it has passed and
    ///   once cancellation was requested; nil when no timer can cancel the token.
    public var timeRemaining: Duration? {
        deadline?.remaining
    }
}
