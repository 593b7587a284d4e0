extension Future {
    /// Runs `operation` with a token that is cancelled when `delay` passes, and fails with
    /// ``FutureError/timeout`` at that deadline: the timeout that also **stops the work**.
    ///
    /// ```swift
    /// let user = try await Future.withTimeout(.seconds(3)) { token in
    ///     fetchUser(id, cancellationToken: token)
    /// }.value()
    /// ```
    ///
    /// ### Which timeout to use
    /// - `Future.withTimeout(_:clock:on:cancellationToken:_:)` (this one) when the work should stop at the
    ///   deadline: a request nobody will read, a computation whose result is no longer wanted. The
    ///   work gets the token and must honour it (pass it on to the futures it starts).
    /// - ``timeout(after:clock:on:cancellationToken:)-(_,_,ExecutionContext,_)`` when you only want to stop *waiting*: the work
    ///   goes on (to fill a cache, say) and other holders of the future still get its result.
    ///
    /// ### Semantics
    /// - The timer starts now; `operation` is called on `context`, with a token that is cancelled
    ///   at the deadline or when `cancellationToken` is.
    /// - At the deadline the result fails with ``FutureError/timeout`` at once, without waiting for
    ///   the work to notice its token; the late result is dropped. This holds whether the work
    ///   honours its token (and so fails with `CancellationError` as the deadline cancels it) or
    ///   ignores it.
    /// - Cancelling `cancellationToken` first fails it with `CancellationError` and cancels the work.
    /// - When the work completes before the deadline, its result is the result, the timer is
    ///   stopped and released, and the work's token is not cancelled.
    ///
    /// ### Clock
    /// `delay` is measured on `clock`; on a ``ManualClock`` the deadline passes inside
    /// ``ManualClock/advance(by:)``:
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let limited = Future<Int>.withTimeout(.seconds(3), clock: clock, on: .synchronous) { token in
    ///     Future(value: 1, after: .seconds(30), clock: clock, cancellationToken: token)
    /// }
    /// clock.advance(by: .seconds(3))
    /// #expect(limited.isCompleted)  // failed with FutureError.timeout; the work's token is cancelled
    /// ```
    ///
    /// - Parameters:
    ///   - delay: How long the work may take. Zero or negative times out at once.
    ///   - clock: The clock that measures `delay`. Defaults to ``TimerClock/system``.
    ///   - context: Where `operation` is called. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the work and fails the result with `CancellationError`.
    ///   - operation: Starts the work with the token that the deadline cancels.
    /// - Returns: A future of the work's result, or failing with ``FutureError/timeout``.
    public static func withTimeout(
        _ delay: Duration,
        clock: some TimerClock = .system,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ operation: @escaping @Sendable (CancellationToken) -> Future<Value>
    ) -> Future<Value> {
        let result = Future<Value>()
        if result.failIfCancelled(cancellationToken) { return result }
        result.cancelOnRequest(of: cancellationToken)
        let work = CancellationRequest()
        let forwarding = cancellationToken.onCancel { work.cancel() }
        let deadline = CancellationRequest()
        let timing = deadline.token.onCancel {
            // The deadline has passed (`deadline` is cancelled): the forwarder below completes the
            // result with the timeout whatever the work does now, so the work's token can be
            // cancelled first (whoever sees the timeout also sees the work cancelled) without work
            // that honours it failing the result with its CancellationError.
            work.cancel()
            result.complete(with: .failure(FutureError.timeout))
        }
        result.observe(
            on: .synchronous,
            cancellationToken: .none,
            .result { _ in
                timing.unregister()  // completed first: the deadline cancels nothing
                deadline.cancel()  // stops the timer and releases it
                forwarding.unregister()
            }
        )
        deadline.cancel(after: delay, clock: clock)
        context.execute {
            guard !result.isCompleted else { return }  // timed out or cancelled before it started
            operation(work.token).observe(
                on: .synchronous,
                cancellationToken: .none,
                .result { outcome in
                    // Past the deadline, the timeout wins over whatever the work ended with.
                    result.complete(with: deadline.isCancellationRequested ? .failure(FutureError.timeout) : outcome)
                }
            )
        }
        return result
    }
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form (see Internals.md,
// "One combinator, every form").

extension Future {
    /// Starts `operation` on the main actor with a token that is cancelled after `delay`, and
    /// fails with ``FutureError/timeout`` if it has not completed by then.
    ///
    /// ```swift
    /// @MainActor final class SearchModel {
    ///     var pending = 0
    ///     func search(_ query: @escaping @Sendable (CancellationToken) -> Future<[String]>) -> Future<[String]> {
    ///         Future.withTimeout(.seconds(2), on: .mainActor) { token in
    ///             self.pending += 1
    ///             return query(token)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``withTimeout(_:clock:on:cancellationToken:_:)-(_,_,ExecutionContext,_,_)``; `operation` is called on the main actor.
    ///
    /// - Parameters:
    ///   - delay: How long the operation may take.
    ///   - clock: The clock that measures `delay`; ``SystemClock`` by default, a ``ManualClock`` in tests.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the operation and fails the result with `CancellationError`.
    ///   - operation: Starts the work, on the main actor, with a token the deadline cancels.
    /// - Returns: A future of the operation's result, or failing with ``FutureError/timeout``.
    public static func withTimeout(
        _ delay: Duration,
        clock: some TimerClock = .system,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ operation: @escaping @MainActor (CancellationToken) -> Future<Value>
    ) -> Future<Value> {
        withTimeout(delay, clock: clock, on: context.queue, cancellationToken: cancellationToken) { token in
            MainActor.assumeIsolated { operation(token) }
        }
    }
}
