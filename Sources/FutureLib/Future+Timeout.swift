extension Future {
    /// A future with this one's result, or failing with ``FutureError/timeout`` if it is not
    /// complete after `delay`.
    ///
    /// This only stops *waiting*: the work behind this future goes on. To stop the work too,
    /// give it a token from `CancellationRequest(cancelAfter:)`.
    ///
    /// ```swift
    /// let user = try await fetchUser(id).timeout(after: .seconds(3)).value()
    /// ```
    ///
    /// ### Semantics
    /// - The timer starts now. When this future completes first, the timer is stopped and
    ///   released at once; nothing is left pending.
    /// - A cancelled token fails the new future with `CancellationError` at once.
    /// - The new future completes on `context`. With `.synchronous`, a timeout completes it on the
    ///   timer's thread (FutureLib's timer queue, never the cooperative pool), a result on the
    ///   thread that completes this future. A cancelled token completes it at once.
    ///
    /// ### Clock
    /// `delay` is measured on `clock`. On a ``ManualClock`` the timeout fires inside
    /// ``ManualClock/advance(by:)``, so a test needs no real waiting:
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let reply = Promise<Int>()  // kept: a dropped promise fails its future with brokenPromise at once
    /// let late = reply.future.timeout(after: .seconds(5), clock: clock, on: .synchronous)
    /// clock.advance(by: .seconds(5))
    /// #expect(late.isCompleted)  // failed with FutureError.timeout
    /// ```
    ///
    /// - Parameters:
    ///   - delay: How long to wait. Zero or negative times out at once unless already complete.
    ///   - clock: The clock that measures `delay`. Defaults to ``TimerClock/system``.
    ///   - context: Where the new future is completed. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    /// - Returns: A future of this future's result, or failing with ``FutureError/timeout``.
    public func timeout(
        after delay: Duration,
        clock: some TimerClock = .system,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none
    ) -> Future<Value> {
        let limited = derive(on: .synchronous, cancellationToken: cancellationToken) { result, derived in
            derived.complete(with: result)
        }
        guard !limited.isCompleted else { return limited.delivered(on: context, cancellationToken: cancellationToken) }
        let timer = CancellationRequest()
        timer.token.onCancel { limited.complete(with: .failure(FutureError.timeout)) }
        limited.observe(on: .synchronous, cancellationToken: .none, .result { _ in timer.cancel() })  // stops the timer
        timer.cancel(after: delay, clock: clock)
        return limited.delivered(on: context, cancellationToken: cancellationToken)
    }

    /// Creates a future that succeeds with `value` after `delay`.
    ///
    /// ```swift
    /// let retryAt = Future(value: (), after: .seconds(2), cancellationToken: shutdown.token)
    /// ```
    ///
    /// On the system clock the timer runs on Dispatch, not on the cooperative pool; on a
    /// ``ManualClock`` the future succeeds inside ``ManualClock/advance(by:)``:
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let ready = Future(value: 42, after: .seconds(2), clock: clock)
    /// clock.advance(by: .seconds(2))
    /// #expect(ready.result.flatMap { try? $0.get() } == 42)
    /// ```
    ///
    /// A cancelled token fails the future with `CancellationError` at once and stops the timer.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - delay: How long until the future succeeds. Negative delays count as zero.
    ///   - clock: The clock that measures `delay`. Defaults to ``TimerClock/system``.
    ///   - cancellationToken: Fails the future with `CancellationError` when cancelled first.
    public convenience init(
        value: Value,
        after delay: Duration,
        clock: some TimerClock = .system,
        cancellationToken: CancellationToken = .none
    ) {
        self.init()
        if failIfCancelled(cancellationToken) { return }
        cancelOnRequest(of: cancellationToken)
        let timer = CancellationRequest()
        timer.token.onCancel { [self] in complete(with: .success(value)) }
        observe(on: .synchronous, cancellationToken: .none, .result { _ in timer.cancel() })
        timer.cancel(after: delay, clock: clock)
    }
}

// MARK: - On the main actor

// Completed on the main actor: the context form on the main queue.

extension Future {
    /// Fails with ``FutureError/timeout`` unless this future completes within `delay`; completes on the main actor.
    ///
    /// ```swift
    /// let quick: Future<Int> = Future(value: 1).timeout(after: .seconds(1), on: .mainActor)
    /// ```
    ///
    /// - Parameters:
    ///   - delay: How long to wait. Zero or negative times out at once unless already complete.
    ///   - clock: The clock that measures `delay`; ``SystemClock`` by default, a ``ManualClock`` in tests.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    /// - Returns: A future of this future's result, or failing with ``FutureError/timeout``.
    public func timeout(
        after delay: Duration,
        clock: some TimerClock = .system,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none
    ) -> Future<Value> {
        timeout(after: delay, clock: clock, on: context.queue, cancellationToken: cancellationToken)
    }
}
