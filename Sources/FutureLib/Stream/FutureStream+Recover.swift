extension FutureStream {
    /// Turns every error into a value with `transform`.
    ///
    /// Values pass through; if `transform` throws, the new stream gets that error instead.
    ///
    /// ```swift
    /// let temperatures = sensor.readings.recover { _ in Reading.unknown }
    /// ```
    ///
    /// ### Cancellation
    /// As ``map(on:cancellationToken:_:)-(_,_,(Value)->U)``: a cancelled token is never turned into a value; the
    /// new stream gets `CancellationError` and finishes.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Turns an error into a value.
    /// - Returns: A stream of the values and recovered values.
    @inlinable
    public func recover(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (any Error) throws -> Value
    ) -> FutureStream<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            switch result {
            case .success: derived.publish(result)
            case .failure(let error): derived.publish(Result { try transform(error) })
            }
        }
    }

    /// Replaces every error with the result of the future `transform` returns.
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
    ///   - transform: Starts the recovery for an error.
    /// - Returns: A stream of the values and the recoveries' results.
    public func recoverWith(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (any Error) throws -> Future<Value>
    ) -> FutureStream<Value> {
        deriveAwaiting(on: context, cancellationToken: cancellationToken) { result in
            guard case .failure(let error) = result else { return .now(result) }
            do {
                return .later(try transform(error))
            } catch {
                return .now(.failure(error))
            }
        }
    }

    /// Replaces every error with the results of the stream `transform` returns.
    ///
    /// SimpleFutures' `recoverWith { error -> FutureStream<T> in … }`. Values pass through at once;
    /// the results of the recovery streams are merged in as they arrive (each starting with the
    /// results it keeps). The new stream finishes when this one and every recovery stream have
    /// finished. When a closure could return either a future or a stream, say which:
    /// `{ error -> FutureStream<Value> in … }`.
    ///
    /// ```swift
    /// let readings = liveSensor.readings.recoverWith { _ in backupSensor.readings }
    /// ```
    ///
    /// ### Cancellation
    /// As ``map(on:cancellationToken:_:)-(_,_,(Value)->U)``; a cancelled token also unsubscribes from the recovery
    /// streams.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Returns the stream to continue with after an error.
    /// - Returns: A stream of the values and the recovery streams' results.
    public func recoverWith(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (any Error) throws -> FutureStream<Value>
    ) -> FutureStream<Value> {
        deriveMerging(on: context, cancellationToken: cancellationToken) { result in
            guard case .failure(let error) = result else { return .now(result) }
            do {
                return .merge(try transform(error))
            } catch {
                return .now(.failure(error))
            }
        }
    }

    /// Transforms every error with `transform`.
    ///
    /// ```swift
    /// let readings = sensor.readings.mapError { SensorError(underlying: $0) }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Turns an error into the new error.
    /// - Returns: A stream of the values and the transformed errors.
    @inlinable
    public func mapError(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (any Error) -> any Error
    ) -> FutureStream<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            derived.publish(result.mapError { transform($0) })
        }
    }
}
