// `.mainActor` where `on:` says where a result is delivered or work runs, rather than where a
// continuation's closure runs: `hop(to:)`, `timeout(after:on:)`, `zip`, `Future(on:)`, `traverse`,
// `fold`; `retry`, `withTimeout` and `race` are in Future+MainActorOperations.swift.

extension Future {
    /// Delivers the result on the main actor: the new future completes on the main queue.
    ///
    /// ```swift
    /// let onMain: Future<Int> = Future(value: 1).hop(to: .mainActor)
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    /// - Returns: A future of the same result, completed on the main actor.
    public func hop(
        to context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none
    ) -> Future<Value> {
        hop(to: context.queue, cancellationToken: cancellationToken)
    }

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

    /// Combines this future with `others` into a future of a tuple, completed on the main actor.
    ///
    /// ```swift
    /// let pair: Future<(Int, String)> = Future(value: 1).zip(Future(value: "a"), on: .mainActor)
    /// ```
    ///
    /// - Parameters:
    ///   - others: The futures to combine with this one.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    /// - Returns: A future of all the values.
    public func zip<each Other: Sendable>(
        _ others: repeat Future<each Other>,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none
    ) -> Future<(Value, repeat each Other)> {
        zip(repeat each others, on: context.queue, cancellationToken: cancellationToken)
    }

    /// Creates a future completed by running `work` on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Form {
    ///     var name = "Ada"
    ///     func snapshot() -> Future<String> { Future(on: .mainActor) { self.name } }
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// As ``init(on:cancellationToken:_:)``: a token cancelled before `work` starts skips it.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the future (and skips `work` if it has not started).
    ///   - work: Produces the value, or throws the error the future fails with.
    public convenience init(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ work: @escaping @MainActor () throws -> Value
    ) {
        self.init(on: context.queue, cancellationToken: cancellationToken) {
            try MainActor.assumeIsolated { try work() }
        }
    }
}

extension Sequence where Element: Sendable {
    /// Starts `task` for each element on the main actor, and collects the values in order.
    ///
    /// ```swift
    /// let pages: Future<[Int]> = [1, 2].traverse(on: .mainActor) { Future(value: $0 * 10) }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the result with `CancellationError` and stops starting tasks.
    ///   - maxConcurrency: The most tasks running at once, at least 1; `nil` for no cap.
    ///   - task: Starts the work for one element, on the main actor.
    /// - Returns: A future of all values, in input order.
    public func traverse<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        maxConcurrency: Int? = nil,
        _ task: @escaping @MainActor (Element) -> Future<U>
    ) -> Future<[U]> {
        traverse(on: context.queue, cancellationToken: cancellationToken, maxConcurrency: maxConcurrency) { element in
            MainActor.assumeIsolated { task(element) }
        }
    }

    /// Combines the values in input order with `combine`, called on the main actor.
    ///
    /// ```swift
    /// let total: Future<Int> = [Future(value: 1), Future(value: 2)].fold(on: .mainActor, initial: 0) { $0 + $1 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the result with `CancellationError` when cancelled first.
    ///   - initial: The value to start from.
    ///   - combine: Adds one value to the accumulated one.
    /// - Returns: A future of the accumulated value.
    public func fold<T: Sendable, U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        initial: U,
        combine: @escaping @MainActor (U, T) throws -> U
    ) -> Future<U> where Element == Future<T> {
        fold(on: context.queue, cancellationToken: cancellationToken, initial: initial) { accumulated, value in
            try MainActor.assumeIsolated { try combine(accumulated, value) }
        }
    }
}
