// `prefix`: the first values only, then the end (`dropFirst`/`drop(while:)`, all but them, are
// in FutureStream+Drop.swift).

extension FutureStream {
    /// The first `maxLength` values, then the end.
    ///
    /// ```swift
    /// let readings = StreamPromise<Int>()
    /// let firstThree = readings.stream.prefix(3)
    /// ```
    ///
    /// ```
    /// source:  1  2  ✕  3  4  5  |
    /// output:  1  2  ✕  3|
    /// ```
    ///
    /// ### Semantics
    /// - Values are counted; errors pass through and are not (`✕` above).
    /// - With the last value counted, the new stream finishes and leaves this stream at once (it
    ///   keeps no subscription). `maxLength` 0 or less gives a stream that has finished.
    ///
    /// - Parameters:
    ///   - maxLength: How many values to pass.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of at most `maxLength` values.
    @inlinable
    public func prefix(_ maxLength: Int, cancellationToken: CancellationToken = .none) -> FutureStream<Value> {
        let remaining = StageBox(max(maxLength, 0))
        let prefix = derive(on: .synchronous, cancellationToken: cancellationToken) { result, derived in
            guard remaining.value > 0 else { return }
            guard case .success = result else {
                derived.publish(result)
                return
            }
            remaining.value -= 1
            derived.publish(result)
            if remaining.value == 0 { derived.finishAndDetach() }
        }
        if maxLength <= 0 { prefix.finishAndDetach() }
        return prefix
    }

    /// The values up to the first one that fails `predicate`, then the end.
    ///
    /// ```swift
    /// let readings = StreamPromise<Int>()
    /// let belowLimit = readings.stream.prefix { $0 < 100 }
    /// ```
    ///
    /// ```
    /// source:  1  2  ✕  3  200  4  |
    /// output:  1  2  ✕  3  |
    /// ```
    ///
    /// ### Semantics
    /// - The first value that fails `predicate` is left out, and the new stream finishes and
    ///   leaves this stream at once. If `predicate` throws, its error is the last result.
    /// - Errors of this stream pass through without calling `predicate`.
    ///
    /// - Parameters:
    ///   - context: Where `predicate` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - predicate: Whether the stream goes on with this value.
    /// - Returns: A stream of the values before the first that fails `predicate`.
    @inlinable
    public func prefix(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        while predicate: @escaping @Sendable (Value) throws -> Bool
    ) -> FutureStream<Value> {
        let isTaking = StageBox(true)
        return derive(on: context, cancellationToken: cancellationToken) { result, derived in
            guard isTaking.value else { return }
            guard case .success(let value) = result else {
                derived.publish(result)
                return
            }
            do {
                if try predicate(value) {
                    derived.publish(result)
                    return
                }
            } catch {
                derived.publish(.failure(error))
            }
            isTaking.value = false
            derived.finishAndDetach()
        }
    }

    /// The values up to the first one that `predicate`, called on the main actor, rejects.
    ///
    /// ```swift
    /// @MainActor final class Feed {
    ///     var limit = 100
    ///     func capped(_ values: FutureStream<Int>) -> FutureStream<Int> {
    ///         values.prefix(on: .mainActor) { $0 < self.limit }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - predicate: Whether the stream goes on with this value.
    /// - Returns: A stream of the values before the first that fails `predicate`.
    public func prefix(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        while predicate: @escaping @MainActor (Value) throws -> Bool
    ) -> FutureStream<Value> {
        prefix(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try predicate(value) }
        }
    }
}

// MARK: - Async closures, on the main actor, isolated to an actor

// As `map`'s: `predicate` runs in a task (on FutureLib's threads or the context's, on the main
// actor, or isolated to an actor), one call at a time and in order. The token cancels the task.

extension FutureStream {
    /// The values up to the first one that fails async `predicate`, then the end.
    ///
    /// ```swift
    /// let uploads = StreamPromise<Int>()
    /// let withinQuota = uploads.stream.prefix { size in
    ///     await Task.yield()  // asks the quota service, say
    ///     return size < 1_000
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `prefix(on:cancellationToken:while:)`, except that `predicate` runs in a task, and the
    /// next value waits until it has returned for this one. A token cancelled while it runs
    /// cancels its task; the new stream gets `CancellationError` and finishes at once.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - predicate: Whether the stream goes on with this value.
    /// - Returns: A stream of the values before the first that fails `predicate`.
    public func prefix(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        while predicate: @escaping @Sendable @concurrent (Value) async throws -> Bool
    ) -> FutureStream<Value> {
        prefix(at: .on(context), cancellationToken: cancellationToken) { value in try await predicate(value) }
    }

    /// The values up to the first one that async `predicate`, in a task on the main actor, rejects.
    ///
    /// ```swift
    /// @MainActor final class Quota {
    ///     var limit = 100
    ///     func capped(_ values: FutureStream<Int>) -> FutureStream<Int> {
    ///         values.prefix(on: .mainActor) { value in
    ///             await Task.yield()
    ///             return value < self.limit
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - predicate: Whether the stream goes on with this value.
    /// - Returns: A stream of the values before the first that fails `predicate`.
    public func prefix(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        while predicate: @escaping @MainActor (Value) async throws -> Bool
    ) -> FutureStream<Value> {
        prefix(at: .mainActor, cancellationToken: cancellationToken) { value in try await predicate(value) }
    }

    /// The values up to the first one that `predicate`, isolated to `actor`, rejects.
    ///
    /// ```swift
    /// actor Budget {
    ///     var limit = 100
    ///     func capped(_ values: FutureStream<Int>) -> FutureStream<Int> {
    ///         values.prefix(on: self) { budget, value in value < budget.limit }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `predicate` is isolated to.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - predicate: Whether the stream goes on with this value; its first parameter is
    ///     `actor`, isolated.
    /// - Returns: A stream of the values before the first that fails `predicate`.
    public func prefix<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        while predicate: @escaping @Sendable (isolated A, Value) throws -> Bool
    ) -> FutureStream<Value> {
        prefix(at: .pool, cancellationToken: cancellationToken) { value in try await predicate(actor, value) }
    }

    /// The async forms' one path of `prefix(while:)`.
    func prefix(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        while predicate: @escaping @Sendable (Value) async throws -> Bool
    ) -> FutureStream<Value> {
        let isTaking = StageBox(true)
        return deriveAsync(at: placement, cancellationToken: cancellationToken) { result, stage in
            guard isTaking.value else { return }
            guard case .success(let value) = result else {
                stage.publish(result)
                return
            }
            do {
                if try await predicate(value) {
                    stage.publish(result)
                    return
                }
            } catch {
                stage.publish(.failure(error))
            }
            isTaking.value = false
            stage.finishAndDetach()
        }
    }
}
