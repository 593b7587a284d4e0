// `scan`: the running value, published after each value.

extension FutureStream {
    /// Combines every value into a running value with `nextPartialResult`, and streams each one.
    ///
    /// Combine's `scan`; swift-async-algorithms calls it `reductions`.
    ///
    /// ```swift
    /// let deposits = StreamPromise<Int>()
    /// let balances = deposits.stream.scan(0) { balance, deposit in balance + deposit }
    /// ```
    ///
    /// ```
    /// source:  1  2  ✕  3  |
    /// output:  1  3  ✕  6  |     (scan(0, +))
    /// ```
    ///
    /// ### Semantics
    /// - `nextPartialResult` runs on `context` once per value, one call at a time, in order, with
    ///   the last running value (`initialResult` at first); the new stream gets each result.
    ///   `initialResult` itself is not published.
    /// - Errors pass through and leave the running value as it is; if `nextPartialResult`
    ///   throws, the new stream gets that error and the running value stays as it was.
    ///
    /// - Parameters:
    ///   - initialResult: The running value before the first value.
    ///   - context: Where `nextPartialResult` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - nextPartialResult: Combines the running value and a value into the next running value.
    /// - Returns: A stream of the running values.
    public func scan<U: Sendable>(
        _ initialResult: U,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ nextPartialResult: @escaping @Sendable (U, Value) throws -> U
    ) -> FutureStream<U> {
        let running = StageBox(initialResult)
        return derive(on: context, cancellationToken: cancellationToken) { result, derived in
            switch result {
            case .success(let value):
                do {
                    running.value = try nextPartialResult(running.value, value)
                    derived.publish(.success(running.value))
                } catch {
                    derived.publish(.failure(error))
                }
            case .failure(let error):
                derived.publish(.failure(error))
            }
        }
    }

    /// Combines every value into a running value with `nextPartialResult`, called on the main
    /// actor, and streams each one.
    ///
    /// ```swift
    /// @MainActor final class Score {
    ///     var bonus = 1
    ///     func totals(_ points: FutureStream<Int>) -> FutureStream<Int> {
    ///         points.scan(0, on: .mainActor) { $0 + $1 + self.bonus }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - initialResult: The running value before the first value.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - nextPartialResult: Combines the running value and a value into the next running value.
    /// - Returns: A stream of the running values.
    public func scan<U: Sendable>(
        _ initialResult: U,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ nextPartialResult: @escaping @MainActor (U, Value) throws -> U
    ) -> FutureStream<U> {
        scan(initialResult, on: context.queue, cancellationToken: cancellationToken) { partial, value in
            try MainActor.assumeIsolated { try nextPartialResult(partial, value) }
        }
    }
}
