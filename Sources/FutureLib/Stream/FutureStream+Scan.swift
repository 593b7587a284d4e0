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
    @inlinable
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

// MARK: - Async closures, on the main actor, isolated to an actor

// As `map`'s: `nextPartialResult` runs in a task (on FutureLib's threads or the context's, on the
// main actor, or isolated to an actor), one call at a time and in order. The token cancels the task.

extension FutureStream {
    /// Combines every value into a running value with async `nextPartialResult`, one call at a
    /// time, in order, and streams each one.
    ///
    /// ```swift
    /// let deposits = StreamPromise<Int>()
    /// let balances = deposits.stream.scan(0) { balance, deposit in
    ///     await Task.yield()  // a ledger call, say
    ///     return balance + deposit
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `scan(_:on:cancellationToken:_:)`, except that `nextPartialResult` runs in a task, and
    /// the next value waits until it has returned for this one. A token cancelled while it runs
    /// cancels its task; the new stream gets `CancellationError` and finishes at once.
    ///
    /// - Parameters:
    ///   - initialResult: The running value before the first value.
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - nextPartialResult: Combines the running value and a value into the next running value.
    /// - Returns: A stream of the running values.
    public func scan<U: Sendable>(
        _ initialResult: U,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ nextPartialResult: @escaping @Sendable @concurrent (U, Value) async throws -> U
    ) -> FutureStream<U> {
        scan(initialResult, at: .on(context), cancellationToken: cancellationToken) { partial, value in
            try await nextPartialResult(partial, value)
        }
    }

    /// Combines every value into a running value with async `nextPartialResult`, in a task on the
    /// main actor, and streams each one.
    ///
    /// ```swift
    /// @MainActor final class Tally {
    ///     var bonus = 1
    ///     func totals(_ points: FutureStream<Int>) -> FutureStream<Int> {
    ///         points.scan(0, on: .mainActor) { total, points in
    ///             await Task.yield()
    ///             return total + points + self.bonus
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - initialResult: The running value before the first value.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - nextPartialResult: Combines the running value and a value into the next running value.
    /// - Returns: A stream of the running values.
    public func scan<U: Sendable>(
        _ initialResult: U,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ nextPartialResult: @escaping @MainActor (U, Value) async throws -> U
    ) -> FutureStream<U> {
        scan(initialResult, at: .mainActor, cancellationToken: cancellationToken) { partial, value in
            try await nextPartialResult(partial, value)
        }
    }

    /// Combines every value into a running value with `nextPartialResult`, isolated to `actor`,
    /// and streams each one.
    ///
    /// ```swift
    /// actor Scoreboard {
    ///     var bonus = 1
    ///     func totals(_ points: FutureStream<Int>) -> FutureStream<Int> {
    ///         points.scan(0, on: self) { board, total, points in total + points + board.bonus }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - initialResult: The running value before the first value.
    ///   - actor: The actor `nextPartialResult` is isolated to.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - nextPartialResult: Combines the running value and a value into the next running value;
    ///     its first parameter is `actor`, isolated.
    /// - Returns: A stream of the running values.
    public func scan<A: Actor, U: Sendable>(
        _ initialResult: U,
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ nextPartialResult: @escaping @Sendable (isolated A, U, Value) throws -> U
    ) -> FutureStream<U> {
        scan(initialResult, at: .pool, cancellationToken: cancellationToken) { partial, value in
            try await nextPartialResult(actor, partial, value)
        }
    }

    /// The async forms' one path.
    func scan<U: Sendable>(
        _ initialResult: U,
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ nextPartialResult: @escaping @Sendable (U, Value) async throws -> U
    ) -> FutureStream<U> {
        let running = StageBox(initialResult)
        return deriveAsync(at: placement, cancellationToken: cancellationToken) { result, stage in
            switch result {
            case .success(let value):
                do {
                    let next = try await nextPartialResult(running.value, value)
                    running.value = next
                    stage.publish(.success(next))
                } catch {
                    stage.publish(.failure(error))
                }
            case .failure(let error):
                stage.publish(.failure(error))
            }
        }
    }
}
