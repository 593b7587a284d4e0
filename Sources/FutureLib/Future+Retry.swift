extension Future {
    /// Runs `operation` until it succeeds, at most `maxAttempts` times, waiting as `backoff` says
    /// between attempts.
    ///
    /// ```swift
    /// let shutdown = CancellationRequest()
    /// let page = Future.retry(
    ///     maxAttempts: 5,
    ///     backoff: .exponential(initial: .milliseconds(100), maximum: .seconds(5)).jittered(),
    ///     cancellationToken: shutdown.token,
    ///     shouldRetry: { error in error is URLError }
    /// ) { token in
    ///     download(url, cancellationToken: token)
    /// }
    /// ```
    ///
    /// ### Semantics
    /// - The first attempt starts now (on `context`); each later one after the delay that
    ///   ``Backoff/delay(beforeRetry:)`` gives, measured on `clock` from the moment the previous
    ///   attempt failed. On the system clock the delays run on Dispatch timers, not on the
    ///   cooperative pool, and never block a thread.
    /// - Succeeds with the first success. Fails with the last error once `maxAttempts` attempts
    ///   failed, or at once with an error that `shouldRetry` rejects (by default every error but
    ///   `CancellationError` is retried).
    /// - Each attempt gets a token of its own, cancelled when `cancellationToken` is.
    ///
    /// ### Cancellation
    /// Cancelling `cancellationToken` fails the result with `CancellationError` at once, stops and
    /// releases a pending delay (no further attempt starts) and cancels the token of the attempt
    /// in flight; its late result is dropped.
    ///
    /// ### Clock
    /// On a ``ManualClock`` each delay passes inside ``ManualClock/advance(by:)``, so a test
    /// observes every attempt at its exact instant without waiting:
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let retried = Future<Int>.retry(
    ///     maxAttempts: 3,
    ///     backoff: .exponential(initial: .seconds(1), maximum: .seconds(10)),
    ///     clock: clock,
    ///     on: .synchronous
    /// ) { _ in
    ///     print("attempt at", clock.now)  // 0 seconds, then 1 seconds, then 3 seconds
    ///     return Future(error: FutureError.timeout)
    /// }
    /// clock.advance(by: .seconds(10))  // all three attempts ran inside this call
    /// #expect(retried.isCompleted)
    /// ```
    ///
    /// - Parameters:
    ///   - maxAttempts: How many attempts at most, including the first; at least 1.
    ///   - backoff: The delays between attempts. Defaults to ``Backoff/immediate``.
    ///   - clock: The clock that measures the delays. Defaults to ``TimerClock/system``.
    ///   - context: Where `operation` is called. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Stops retrying and fails the result with `CancellationError`.
    ///   - shouldRetry: Whether an attempt's error is worth another attempt.
    ///   - operation: Starts one attempt, with a token that is cancelled when the retry is.
    /// - Returns: A future of the first successful attempt's value.
    public static func retry(
        maxAttempts: Int,
        backoff: Backoff = .immediate,
        clock: some TimerClock = .system,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        shouldRetry: @escaping @Sendable (any Error) -> Bool = { !($0 is CancellationError) },
        _ operation: @escaping @Sendable (CancellationToken) -> Future<Value>
    ) -> Future<Value> {
        precondition(maxAttempts >= 1, "retry: maxAttempts must be at least 1, got \(maxAttempts)")
        let retrying = Retrying(
            maxAttempts: maxAttempts,
            backoff: backoff,
            clock: clock,
            context: context,
            cancellationToken: cancellationToken,
            shouldRetry: shouldRetry,
            operation: operation
        )
        let result = retrying.result
        if result.failIfCancelled(cancellationToken) { return result }
        result.cancelOnRequest(of: cancellationToken)
        context.execute { retrying.attempt(1) }
        return result
    }
}

/// One `retry`: starts the attempts and the delays between them. Held by the attempt in flight
/// or the pending delay, and released with them.
final class Retrying<Value: Sendable>: Sendable {
    let result = Future<Value>()
    let maxAttempts: Int
    let backoff: Backoff
    let clock: any TimerClock
    let context: any ExecutionContext
    let cancellationToken: CancellationToken
    let shouldRetry: @Sendable (any Error) -> Bool
    let operation: @Sendable (CancellationToken) -> Future<Value>

    init(
        maxAttempts: Int,
        backoff: Backoff,
        clock: any TimerClock,
        context: any ExecutionContext,
        cancellationToken: CancellationToken,
        shouldRetry: @escaping @Sendable (any Error) -> Bool,
        operation: @escaping @Sendable (CancellationToken) -> Future<Value>
    ) {
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.clock = clock
        self.context = context
        self.cancellationToken = cancellationToken
        self.shouldRetry = shouldRetry
        self.operation = operation
    }

    /// Starts attempt number `number` (from 1), unless the retry is over.
    func attempt(_ number: Int) {
        guard !result.isCompleted else { return }  // cancelled meanwhile
        let attempt = CancellationRequest()
        // Cancels the attempt in flight with the retry; released when the attempt completes.
        let registration = cancellationToken.onCancel { attempt.cancel() }
        // Cancelled between the check above and the registration: no attempt starts.
        guard !attempt.isCancellationRequested else { return }
        operation(attempt.token)
            .observe(
                on: .synchronous,
                cancellationToken: .none,
                .result { [self] outcome in
                    registration.unregister()
                    withExtendedLifetime(attempt) {}
                    finished(number, with: outcome)
                }
            )
    }

    private func finished(_ number: Int, with outcome: Result<Value, any Error>) {
        guard case .failure(let error) = outcome, !result.isCompleted else {
            result.complete(with: outcome)
            return
        }
        guard number < maxAttempts, !cancellationToken.isCancellationRequested, shouldRetry(error) else {
            result.complete(with: outcome)
            return
        }
        let delay = backoff.delay(beforeRetry: number)
        guard delay > .zero else {
            context.execute { [self] in attempt(number + 1) }
            return
        }
        // A cancelled token fails the delay at once, stops its timer and releases this closure.
        Future<Void>(value: (), after: delay, clock: clock, cancellationToken: cancellationToken)
            .observe(
                on: .synchronous,
                cancellationToken: .none,
                .value { [self] in context.execute { [self] in attempt(number + 1) } }
            )
    }
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form (see Internals.md,
// "One combinator, every form").

extension Future {
    /// Calls `operation` on the main actor until it succeeds, at most `maxAttempts` times.
    ///
    /// ```swift
    /// @MainActor final class FeedModel {
    ///     var attempts = 0
    ///     func reload(_ load: @escaping @Sendable (CancellationToken) -> Future<[String]>) -> Future<[String]> {
    ///         Future.retry(maxAttempts: 3, backoff: .exponential(initial: .milliseconds(200), maximum: .seconds(2)), on: .mainActor) { token in
    ///             self.attempts += 1  // main-actor state, no hop
    ///             return load(token)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``retry(maxAttempts:backoff:clock:on:cancellationToken:shouldRetry:_:)-(_,_,_,ExecutionContext,_,_,_)``; each attempt
    /// starts on the main actor.
    ///
    /// - Parameters:
    ///   - maxAttempts: How many times `operation` may be called; at least 1.
    ///   - backoff: How long to wait between attempts.
    ///   - clock: The clock that measures the waits; ``SystemClock`` by default, a ``ManualClock`` in tests.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops retrying and fails the result with `CancellationError`.
    ///   - shouldRetry: Whether a failure is worth another attempt; by default every error but
    ///     `CancellationError`.
    ///   - operation: Starts one attempt, on the main actor, with a token that the overall
    ///     `cancellationToken` cancels.
    /// - Returns: A future of the first successful attempt, or of the last failure.
    public static func retry(
        maxAttempts: Int,
        backoff: Backoff = .immediate,
        clock: some TimerClock = .system,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        shouldRetry: @escaping @Sendable (any Error) -> Bool = { !($0 is CancellationError) },
        _ operation: @escaping @MainActor (CancellationToken) -> Future<Value>
    ) -> Future<Value> {
        retry(
            maxAttempts: maxAttempts,
            backoff: backoff,
            clock: clock,
            on: context.queue,
            cancellationToken: cancellationToken,
            shouldRetry: shouldRetry
        ) { token in
            MainActor.assumeIsolated { operation(token) }
        }
    }
}
