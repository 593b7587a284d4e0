extension FutureStream {
    /// Turns each error that `policy` admits (by default all but `CancellationError`) into a value with `transform`.
    ///
    /// Values pass through; if `transform` throws, the new stream gets that error instead. A
    /// `CancellationError` passes through too, unless `policy` is ``ErrorPolicy/allErrors``, as for
    /// `Future.recover`.
    ///
    /// ```swift
    /// let temperatures = sensor.readings.recover { _ in Reading.unknown }
    /// ```
    ///
    /// ### Cancellation
    /// As `map(on:cancellationToken:_:)`: a cancelled token is never turned into a value; the
    /// new stream gets `CancellationError` and finishes.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns an error into a value.
    /// - Returns: A stream of the values and recovered values.
    @inlinable
    public func recover(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (any Error) throws -> Value
    ) -> FutureStream<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            switch result {
            case .failure(let error) where policy.handles(error): derived.publish(Result { try transform(error) })
            case .success, .failure: derived.publish(result)
            }
        }
    }

    /// Replaces each error that `policy` admits with the result of the future `transform` returns.
    ///
    /// Values pass through at once; recovered results arrive when their futures complete. The new
    /// stream finishes when this one has finished and every such future has completed.
    ///
    /// ```swift
    /// let prices = liveQuotes.recoverWith { _ in fetchLastKnownQuote() }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Starts the recovery for an error.
    /// - Returns: A stream of the values and the recoveries' results.
    public func recoverWith(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (any Error) throws -> Future<Value>
    ) -> FutureStream<Value> {
        deriveAwaiting(on: context, cancellationToken: cancellationToken) { result in
            guard case .failure(let error) = result, policy.handles(error) else { return .now(result) }
            do {
                return .later(try transform(error))
            } catch {
                return .now(.failure(error))
            }
        }
    }

    /// Replaces each error that `policy` admits with the results of the stream `transform` returns.
    ///
    /// Values pass through at once; the results of the recovery streams are merged in as they
    /// arrive (each starting with the results it keeps). The new stream finishes when this one and
    /// every recovery stream have finished. When a closure could return either a future or a
    /// stream, say which: `{ error -> FutureStream<Value> in … }`.
    ///
    /// ```swift
    /// let readings = liveSensor.readings.recoverWith { _ in backupSensor.readings }
    /// ```
    ///
    /// ### Cancellation
    /// As `map(on:cancellationToken:_:)`; a cancelled token also unsubscribes from the recovery
    /// streams.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Returns the stream to continue with after an error.
    /// - Returns: A stream of the values and the recovery streams' results.
    public func recoverWith(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (any Error) throws -> FutureStream<Value>
    ) -> FutureStream<Value> {
        deriveMerging(on: context, cancellationToken: cancellationToken) { result in
            guard case .failure(let error) = result, policy.handles(error) else { return .now(result) }
            do {
                return .merge(try transform(error))
            } catch {
                return .now(.failure(error))
            }
        }
    }

    /// Transforms each error that `policy` admits with `transform`.
    ///
    /// ```swift
    /// let readings = sensor.readings.mapError { SensorError(underlying: $0) }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns an error into the new error.
    /// - Returns: A stream of the values and the transformed errors.
    @inlinable
    public func mapError(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (any Error) -> any Error
    ) -> FutureStream<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            derived.publish(result.mapError { policy.handles($0) ? transform($0) : $0 })
        }
    }
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form.

extension FutureStream {
    /// Turns each error that `policy` admits into a value with `transform`, on the main actor.
    ///
    /// ```swift
    /// let safe: FutureStream<Int> = FutureStream(error: FutureError.timeout).recover(on: .mainActor) { _ in 0 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns an error into a value, or throws the error to pass on.
    /// - Returns: A stream of the values and recovered values.
    public func recover(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) throws -> Value
    ) -> FutureStream<Value> {
        recover(on: context.queue, cancellationToken: cancellationToken, policy: policy) { error in
            try MainActor.assumeIsolated { try transform(error) }
        }
    }

    /// Transforms each error that `policy` admits with `transform`, on the main actor.
    ///
    /// ```swift
    /// let wrapped: FutureStream<Int> = FutureStream(value: 1).mapError(on: .mainActor) { $0 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns an error into the new error.
    /// - Returns: A stream of the values and transformed errors.
    public func mapError(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) -> any Error
    ) -> FutureStream<Value> {
        mapError(on: context.queue, cancellationToken: cancellationToken, policy: policy) { error in
            MainActor.assumeIsolated { transform(error) }
        }
    }

    /// Replaces each error that `policy` admits with the result of the future `transform`, called on the main
    /// actor, returns.
    ///
    /// ```swift
    /// let safe: FutureStream<Int> = FutureStream(error: FutureError.timeout).recoverWith(on: .mainActor) { _ in
    ///     Future(value: 0)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Starts the recovery for an error.
    /// - Returns: A stream of the values and the recoveries' results.
    public func recoverWith(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) throws -> Future<Value>
    ) -> FutureStream<Value> {
        recoverWith(on: context.queue, cancellationToken: cancellationToken, policy: policy) { error in
            try MainActor.assumeIsolated { try transform(error) }
        }
    }

    /// Replaces each error that `policy` admits with the results of the stream `transform`, called on the
    /// main actor, returns.
    ///
    /// ```swift
    /// let safe: FutureStream<Int> = FutureStream(error: FutureError.timeout).recoverWith(on: .mainActor) {
    ///     _ -> FutureStream<Int> in FutureStream(value: 0)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Returns the stream to continue with after an error.
    /// - Returns: A stream of the values and the recovery streams' results.
    public func recoverWith(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) throws -> FutureStream<Value>
    ) -> FutureStream<Value> {
        recoverWith(on: context.queue, cancellationToken: cancellationToken, policy: policy) { error in
            try MainActor.assumeIsolated { try transform(error) }
        }
    }
}

// MARK: - Async closures

// `transform` runs in a task on FutureLib's threads (or the context's), one call at a time and in
// order with the values passing through. The token cancels the task.

extension FutureStream {
    /// Turns each error that `policy` admits into a value with async `transform`, one call at a time, in order.
    ///
    /// ```swift
    /// let readings: FutureStream<Int> = FutureStream(error: FutureError.timeout).recover { _ in
    ///     try await Task.sleep(for: .milliseconds(1))
    ///     return 0
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `recover(on:cancellationToken:policy:_:)`, except that `transform`
    /// runs in a task, and the next result waits until it has returned.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns an error into a value, or throws the error to pass on.
    /// - Returns: A stream of the values and recovered values.
    public func recover(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable @concurrent (any Error) async throws -> Value
    ) -> FutureStream<Value> {
        recover(at: .on(context), cancellationToken: cancellationToken, policy: policy) { error in
            try await transform(error)
        }
    }
}

// MARK: - Async closures on the main actor

extension FutureStream {
    /// Turns each error that `policy` admits into a value with async `transform`, in a task on the main
    /// actor, in order.
    ///
    /// ```swift
    /// let readings: FutureStream<Int> = FutureStream(error: FutureError.timeout).recover(on: .mainActor) { _ in
    ///     await Task.yield()
    ///     return 0
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns an error into a value, or throws the error to pass on.
    /// - Returns: A stream of the values and recovered values.
    public func recover(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) async throws -> Value
    ) -> FutureStream<Value> {
        recover(at: .mainActor, cancellationToken: cancellationToken, policy: policy) { error in
            try await transform(error)
        }
    }
}

// MARK: - Isolated to an actor

extension FutureStream {
    /// Turns each error that `policy` admits into a value with `transform`, isolated to `actor`, one call at
    /// a time, in order.
    ///
    /// ```swift
    /// actor Fallbacks {
    ///     var lastGood = 0
    ///     func readings(_ live: FutureStream<Int>) -> FutureStream<Int> {
    ///         live.recover(on: self) { fallbacks, _ in fallbacks.lastGood }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `transform` is isolated to.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns an error into a value, or throws; its first parameter is `actor`, isolated.
    /// - Returns: A stream of the values and recovered values.
    public func recover<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (isolated A, any Error) throws -> Value
    ) -> FutureStream<Value> {
        recover(at: .pool, cancellationToken: cancellationToken, policy: policy) { error in
            try await transform(actor, error)
        }
    }
}
