extension Future {
    /// Continues the value with the stream `transform` returns.
    ///
    /// The new stream gets every result of the inner stream (starting with those it keeps) and
    /// finishes with it. If this future fails, or `transform` throws, the new stream gets that one
    /// error and finishes.
    ///
    /// ```swift
    /// let readings: FutureStream<Reading> = connect(to: device).flatMap(capacity: 10) { connection in
    ///     connection.readings
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// When `cancellationToken` is cancelled, the new stream gets `CancellationError` and finishes
    /// at once, without waiting for this future or the inner stream (which is unsubscribed).
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the new stream keeps for late subscribers.
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Returns the stream for the value.
    /// - Returns: A stream of the inner stream's results.
    public func flatMap<U: Sendable>(
        capacity: Int,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Value) throws -> FutureStream<U>
    ) -> FutureStream<U> {
        continueWithStream(capacity: capacity, on: context, cancellationToken: cancellationToken) { result in
            try transform(result.get())
        }
    }

    /// Continues an error with the stream `transform` returns; a value becomes a stream of that value.
    ///
    /// If this future succeeds, the new stream gets its value and finishes. If it fails, the new
    /// stream gets every result of the stream `transform` returns (starting with those it keeps)
    /// and finishes with it; if `transform` throws, the new stream gets that error and finishes. A
    /// `CancellationError` is not recovered from unless `policy` is ``ErrorPolicy/allErrors``: the
    /// new stream gets it and finishes.
    ///
    /// ```swift
    /// let readings: FutureStream<Reading> = fetchLastReading().recoverWith(capacity: 10) { _ in
    ///     sensor.readings
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// When `cancellationToken` is cancelled, the new stream gets `CancellationError` and finishes
    /// at once, without waiting for this future or the recovery stream (which is unsubscribed);
    /// `transform` is never called for a cancelled token.
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the new stream keeps for late subscribers.
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Returns the stream to continue with after an error.
    /// - Returns: A stream of this future's value, or of the recovery stream's results.
    public func recoverWith(
        capacity: Int,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (any Error) throws -> FutureStream<Value>
    ) -> FutureStream<Value> {
        continueWithStream(capacity: capacity, on: context, cancellationToken: cancellationToken) { result in
            switch result {
            case .success(let value): FutureStream(value: value)
            case .failure(let error) where policy.handles(error): try transform(error)
            case .failure(let error): FutureStream(error: error)
            }
        }
    }

    /// Continues the value with the stream `transform`, called on the main actor, returns.
    ///
    /// ```swift
    /// let readings: FutureStream<Int> = Future(value: 2).flatMap(capacity: 10, on: .mainActor) { count in
    ///     FutureStream(value: count * 10)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the new stream keeps for late subscribers.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Returns the stream for the value.
    /// - Returns: A stream of the inner stream's results.
    public func flatMap<U: Sendable>(
        capacity: Int,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) throws -> FutureStream<U>
    ) -> FutureStream<U> {
        flatMap(capacity: capacity, on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try transform(value) }
        }
    }

    /// Continues an error with the stream `transform`, called on the main actor, returns.
    ///
    /// ```swift
    /// let readings: FutureStream<Int> = Future<Int>(error: FutureError.timeout)
    ///     .recoverWith(capacity: 10, on: .mainActor) { _ in FutureStream(value: 0) }
    /// ```
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the new stream keeps for late subscribers.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Returns the stream to continue with after an error.
    /// - Returns: A stream of this future's value, or of the recovery stream's results.
    public func recoverWith(
        capacity: Int,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) throws -> FutureStream<Value>
    ) -> FutureStream<Value> {
        recoverWith(capacity: capacity, on: context.queue, cancellationToken: cancellationToken, policy: policy) {
            error in
            try MainActor.assumeIsolated { try transform(error) }
        }
    }

    /// A stream of `capacity` fed by the stream `next` returns for this future's result (or by the
    /// error it throws), cancelled and finished at once by `cancellationToken`.
    private func continueWithStream<U: Sendable>(
        capacity: Int,
        on context: some ExecutionContext,
        cancellationToken: CancellationToken,
        _ next: @escaping @Sendable (Result<Value, any Error>) throws -> FutureStream<U>
    ) -> FutureStream<U> {
        let derived = FutureStream<U>(capacity: capacity)
        if derived.failIfCancelled(cancellationToken) { return derived }
        derived.cancelOnRequest(of: cancellationToken)
        observe(
            on: context,
            cancellationToken: cancellationToken,
            .result { result in
                guard !cancellationToken.isCancellationRequested else { return }
                let inner: FutureStream<U>
                do {
                    inner = try next(result)
                } catch {
                    derived.publish(.failure(error))
                    derived.finish()
                    return
                }
                // Feeds a stream: drained through the trampoline, so that a chain of streams each
                // the inner stream of the next `flatMap(capacity:)` delivers in constant stack.
                inner.subscribe(on: .synchronous, cancellationToken: cancellationToken, feedsStream: true) { event in
                    switch event {
                    case .result(let result): derived.publish(result)
                    case .finished: derived.finish()
                    case .cancelled: break  // the derived stream was cancelled by the same token
                    }
                }
            }
        )
        return derived
    }
}
