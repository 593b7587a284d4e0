// `dropFirst` and `drop(while:)`: every value but the first ones (`prefix`, only them, is in
// FutureStream+Prefix.swift).

extension FutureStream {
    /// Every value but the first `count`.
    ///
    /// ```swift
    /// let readings = StreamPromise<Int>()
    /// let afterWarmUp = readings.stream.dropFirst(2)
    /// ```
    ///
    /// ```
    /// source:  1  2  ✕  3  4  |
    /// output:        ✕  3  4  |
    /// ```
    ///
    /// Values are counted; errors pass through and are not. A `count` of 0 or less drops nothing.
    ///
    /// - Parameters:
    ///   - count: How many values to leave out. Defaults to 1.
    ///   - cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of the values after the first `count`.
    @inlinable
    public func dropFirst(_ count: Int = 1, cancellationToken: CancellationToken = .none) -> FutureStream<Value> {
        let remaining = StageBox(max(count, 0))
        return derive(on: .synchronous, cancellationToken: cancellationToken) { result, derived in
            if case .success = result, remaining.value > 0 {
                remaining.value -= 1
                return
            }
            derived.publish(result)
        }
    }

    /// Every value from the first one that fails `predicate` on.
    ///
    /// ```swift
    /// let readings = StreamPromise<Int>()
    /// let afterZeros = readings.stream.drop { $0 == 0 }
    /// ```
    ///
    /// ```
    /// source:  0  0  ✕  5  0  6  |
    /// output:        ✕  5  0  6  |
    /// ```
    ///
    /// `predicate` is not called again once a value failed it. Errors pass through; if
    /// `predicate` throws, the new stream gets that error in place of the value, and dropping
    /// goes on.
    ///
    /// - Parameters:
    ///   - context: Where `predicate` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - predicate: Whether to leave this value out.
    /// - Returns: A stream of the values from the first that fails `predicate` on.
    @inlinable
    public func drop(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        while predicate: @escaping @Sendable (Value) throws -> Bool
    ) -> FutureStream<Value> {
        let isDropping = StageBox(true)
        return derive(on: context, cancellationToken: cancellationToken) { result, derived in
            guard isDropping.value, case .success(let value) = result else {
                derived.publish(result)
                return
            }
            do {
                guard try !predicate(value) else { return }
                isDropping.value = false
                derived.publish(result)
            } catch {
                derived.publish(.failure(error))
            }
        }
    }

    /// Every value from the first one that `predicate`, called on the main actor, rejects on.
    ///
    /// ```swift
    /// @MainActor final class Pipeline {
    ///     var threshold = 10
    ///     func started(_ values: FutureStream<Int>) -> FutureStream<Int> {
    ///         values.drop(on: .mainActor) { $0 < self.threshold }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - predicate: Whether to leave this value out.
    /// - Returns: A stream of the values from the first that fails `predicate` on.
    public func drop(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        while predicate: @escaping @MainActor (Value) throws -> Bool
    ) -> FutureStream<Value> {
        drop(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try predicate(value) }
        }
    }
}

// MARK: - Async closures, on the main actor, isolated to an actor

// As `map`'s: `predicate` runs in a task (on FutureLib's threads or the context's, on the main
// actor, or isolated to an actor), one call at a time and in order. The token cancels the task.

extension FutureStream {
    /// Every value from the first one that fails async `predicate` on.
    ///
    /// ```swift
    /// let frames = StreamPromise<Int>()
    /// let afterWarmUp = frames.stream.drop { frame in
    ///     await Task.yield()  // asks whether the sensor has settled, say
    ///     return frame < 3
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `drop(on:cancellationToken:while:)`, except that `predicate` runs in a task, and the
    /// next value waits until it has returned for this one. A token cancelled while it runs
    /// cancels its task; the new stream gets `CancellationError` and finishes at once.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - predicate: Whether to leave this value out.
    /// - Returns: A stream of the values from the first that fails `predicate` on.
    public func drop(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        while predicate: @escaping @Sendable @concurrent (Value) async throws -> Bool
    ) -> FutureStream<Value> {
        drop(at: .on(context), cancellationToken: cancellationToken) { value in try await predicate(value) }
    }

    /// Every value from the first one that async `predicate`, in a task on the main actor,
    /// rejects on.
    ///
    /// ```swift
    /// @MainActor final class Warmup {
    ///     var threshold = 10
    ///     func started(_ values: FutureStream<Int>) -> FutureStream<Int> {
    ///         values.drop(on: .mainActor) { value in
    ///             await Task.yield()
    ///             return value < self.threshold
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - predicate: Whether to leave this value out.
    /// - Returns: A stream of the values from the first that fails `predicate` on.
    public func drop(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        while predicate: @escaping @MainActor (Value) async throws -> Bool
    ) -> FutureStream<Value> {
        drop(at: .mainActor, cancellationToken: cancellationToken) { value in try await predicate(value) }
    }

    /// Every value from the first one that `predicate`, isolated to `actor`, rejects on.
    ///
    /// ```swift
    /// actor Calibration {
    ///     var threshold = 10
    ///     func started(_ values: FutureStream<Int>) -> FutureStream<Int> {
    ///         values.drop(on: self) { calibration, value in value < calibration.threshold }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `predicate` is isolated to.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - predicate: Whether to leave this value out; its first parameter is `actor`, isolated.
    /// - Returns: A stream of the values from the first that fails `predicate` on.
    public func drop<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        while predicate: @escaping @Sendable (isolated A, Value) throws -> Bool
    ) -> FutureStream<Value> {
        drop(at: .pool, cancellationToken: cancellationToken) { value in try await predicate(actor, value) }
    }

    /// The async forms' one path of `drop(while:)`.
    func drop(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        while predicate: @escaping @Sendable (Value) async throws -> Bool
    ) -> FutureStream<Value> {
        let isDropping = StageBox(true)
        return deriveAsync(at: placement, cancellationToken: cancellationToken) { result, stage in
            guard isDropping.value, case .success(let value) = result else {
                stage.publish(result)
                return
            }
            do {
                guard try await !predicate(value) else { return }
                isDropping.value = false
                stage.publish(result)
            } catch {
                stage.publish(.failure(error))
            }
        }
    }
}
