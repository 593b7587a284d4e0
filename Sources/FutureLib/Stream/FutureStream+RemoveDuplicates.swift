// `removeDuplicates`: a value equal to the one before it is left out.

extension FutureStream where Value: Equatable {
    /// Leaves out every value equal to the value before it.
    ///
    /// ```swift
    /// let readings = StreamPromise<Int>()
    /// let changes = readings.stream.removeDuplicates()
    /// ```
    ///
    /// ```
    /// source:  1  1  2  2  2  1  |
    /// output:  1     2        1  |
    /// ```
    ///
    /// ### Semantics
    /// - The first value always passes; each later value is compared with the last value that
    ///   passed, as swift-async-algorithms does.
    /// - Errors pass through and are not compared: a value after an error is compared with the
    ///   value before the error.
    ///
    /// - Parameter cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream without consecutive repeats.
    @inlinable
    public func removeDuplicates(cancellationToken: CancellationToken = .none) -> FutureStream<Value> {
        removeDuplicates(on: .synchronous, cancellationToken: cancellationToken, by: ==)
    }
}

extension FutureStream {
    /// Leaves out every value that `areEquivalent` says repeats the value before it.
    ///
    /// ```swift
    /// let names = StreamPromise<String>()
    /// let changes = names.stream.removeDuplicates { $0.lowercased() == $1.lowercased() }
    /// ```
    ///
    /// ### Semantics
    /// As `removeDuplicates(cancellationToken:)`. `areEquivalent` gets the previous value and
    /// the new one, on `context`, one call at a time, in order. If it throws, the new stream gets
    /// that error in place of the value, which does not pass.
    ///
    /// - Parameters:
    ///   - context: Where `areEquivalent` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - areEquivalent: Whether the new value (second) repeats the previous one (first).
    /// - Returns: A stream without consecutive repeats.
    @inlinable
    public func removeDuplicates(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        by areEquivalent: @escaping @Sendable (Value, Value) throws -> Bool
    ) -> FutureStream<Value> {
        let previous = StageBox<Value?>(nil)
        return derive(on: context, cancellationToken: cancellationToken) { result, derived in
            guard case .success(let value) = result else {
                derived.publish(result)
                return
            }
            guard let last = previous.value else {
                previous.value = value
                derived.publish(result)
                return
            }
            do {
                guard try !areEquivalent(last, value) else { return }
                previous.value = value
                derived.publish(result)
            } catch {
                derived.publish(.failure(error))
            }
        }
    }

    /// Leaves out every value that `areEquivalent`, called on the main actor, says repeats the
    /// value before it.
    ///
    /// ```swift
    /// @MainActor final class Screen {
    ///     var tolerance = 0.5
    ///     func changes(_ levels: FutureStream<Double>) -> FutureStream<Double> {
    ///         levels.removeDuplicates(on: .mainActor) { abs($0 - $1) < self.tolerance }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - areEquivalent: Whether the new value (second) repeats the previous one (first).
    /// - Returns: A stream without consecutive repeats.
    public func removeDuplicates(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        by areEquivalent: @escaping @MainActor (Value, Value) throws -> Bool
    ) -> FutureStream<Value> {
        removeDuplicates(on: context.queue, cancellationToken: cancellationToken) { previous, value in
            try MainActor.assumeIsolated { try areEquivalent(previous, value) }
        }
    }
}

// MARK: - Async closures, on the main actor, isolated to an actor

// As `map`'s: `areEquivalent` runs in a task (on FutureLib's threads or the context's, on the
// main actor, or isolated to an actor), one call at a time and in order. The token cancels the task.

extension FutureStream {
    /// Leaves out every value that async `areEquivalent` says repeats the value before it.
    ///
    /// ```swift
    /// let names = StreamPromise<String>()
    /// let changes = names.stream.removeDuplicates { previous, name in
    ///     await Task.yield()  // a comparison that needs async work
    ///     return previous.lowercased() == name.lowercased()
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `removeDuplicates(on:cancellationToken:by:)`, except that `areEquivalent` runs in a
    /// task, and the next value waits until it has returned for this one. A token cancelled
    /// while it runs cancels its task; the new stream gets `CancellationError` and finishes at once.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - areEquivalent: Whether the new value (second) repeats the previous one (first).
    /// - Returns: A stream without consecutive repeats.
    public func removeDuplicates(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        by areEquivalent: @escaping @Sendable @concurrent (Value, Value) async throws -> Bool
    ) -> FutureStream<Value> {
        removeDuplicates(at: .on(context), cancellationToken: cancellationToken) { previous, value in
            try await areEquivalent(previous, value)
        }
    }

    /// Leaves out every value that async `areEquivalent`, in a task on the main actor, says
    /// repeats the value before it.
    ///
    /// ```swift
    /// @MainActor final class Gauge {
    ///     var tolerance = 0.5
    ///     func changes(_ levels: FutureStream<Double>) -> FutureStream<Double> {
    ///         levels.removeDuplicates(on: .mainActor) { previous, level in
    ///             await Task.yield()
    ///             return abs(previous - level) < self.tolerance
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - areEquivalent: Whether the new value (second) repeats the previous one (first).
    /// - Returns: A stream without consecutive repeats.
    public func removeDuplicates(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        by areEquivalent: @escaping @MainActor (Value, Value) async throws -> Bool
    ) -> FutureStream<Value> {
        removeDuplicates(at: .mainActor, cancellationToken: cancellationToken) { previous, value in
            try await areEquivalent(previous, value)
        }
    }

    /// Leaves out every value that `areEquivalent`, isolated to `actor`, says repeats the value
    /// before it.
    ///
    /// ```swift
    /// actor Thermostat {
    ///     var tolerance = 0.5
    ///     func changes(_ levels: FutureStream<Double>) -> FutureStream<Double> {
    ///         levels.removeDuplicates(on: self) { thermostat, previous, level in
    ///             abs(previous - level) < thermostat.tolerance
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `areEquivalent` is isolated to.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - areEquivalent: Whether the new value (third) repeats the previous one (second); its
    ///     first parameter is `actor`, isolated.
    /// - Returns: A stream without consecutive repeats.
    public func removeDuplicates<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        by areEquivalent: @escaping @Sendable (isolated A, Value, Value) throws -> Bool
    ) -> FutureStream<Value> {
        removeDuplicates(at: .pool, cancellationToken: cancellationToken) { previous, value in
            try await areEquivalent(actor, previous, value)
        }
    }

    /// The async forms' one path.
    func removeDuplicates(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        by areEquivalent: @escaping @Sendable (Value, Value) async throws -> Bool
    ) -> FutureStream<Value> {
        let previous = StageBox<Value?>(nil)
        return deriveAsync(at: placement, cancellationToken: cancellationToken) { result, stage in
            guard case .success(let value) = result else {
                stage.publish(result)
                return
            }
            guard let last = previous.value else {
                previous.value = value
                stage.publish(result)
                return
            }
            do {
                guard try await !areEquivalent(last, value) else { return }
                previous.value = value
                stage.publish(result)
            } catch {
                stage.publish(.failure(error))
            }
        }
    }
}
