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
                    inner = try transform(result.get())
                } catch {
                    derived.publish(.failure(error))
                    derived.finish()
                    return
                }
                inner.subscribe(on: .synchronous, cancellationToken: cancellationToken) { event in
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
