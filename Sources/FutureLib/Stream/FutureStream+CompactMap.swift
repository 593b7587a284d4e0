// `compactMap` and `compacted`: values that become nil are left out.

extension FutureStream {
    /// Transforms every value with `transform` and leaves out the ones it turns into nil.
    ///
    /// Errors pass through without calling `transform`; if `transform` throws, the new stream
    /// gets that error in place of the value (and goes on), as with `map`.
    ///
    /// ```swift
    /// let lines = StreamPromise<String>()
    /// let numbers: FutureStream<Int> = lines.stream.compactMap { Int($0) }  // "x" is left out
    /// ```
    ///
    /// ```
    /// source:  "1"  "x"  "3"  |
    /// output:   1         3   |
    /// ```
    ///
    /// ### Semantics
    /// As `map(on:cancellationToken:_:)`: `transform` runs on `context` once per value, one call
    /// at a time, in order; the new stream finishes when this one does; a cancelled token gives
    /// it one `CancellationError` and the end, and unsubscribes it.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Turns a value into the new value, or nil to leave it out.
    /// - Returns: A stream of the non-nil transformed values, and of the errors.
    public func compactMap<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Value) throws -> U?
    ) -> FutureStream<U> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            switch result {
            case .success(let value):
                do {
                    if let transformed = try transform(value) { derived.publish(.success(transformed)) }
                } catch {
                    derived.publish(.failure(error))
                }
            case .failure(let error):
                derived.publish(.failure(error))
            }
        }
    }

    /// Transforms every value with `transform`, called on the main actor, and leaves out nils.
    ///
    /// ```swift
    /// @MainActor final class Form {
    ///     var base = 10
    ///     func parsed(_ lines: FutureStream<String>) -> FutureStream<Int> {
    ///         lines.compactMap(on: .mainActor) { Int($0, radix: self.base) }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Turns a value into the new value, or nil to leave it out.
    /// - Returns: A stream of the non-nil transformed values, and of the errors.
    public func compactMap<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) throws -> U?
    ) -> FutureStream<U> {
        compactMap(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try transform(value) }
        }
    }

    /// Leaves out the nil values of a stream of optionals.
    ///
    /// ```swift
    /// let lookups = StreamPromise<Int?>()
    /// let found: FutureStream<Int> = lookups.stream.compacted()
    /// ```
    ///
    /// ```
    /// source:  1  nil  3  |
    /// output:  1       3  |
    /// ```
    ///
    /// Errors pass through. No closure runs, so there is no `on:`.
    ///
    /// - Parameter cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of the non-nil values, and of the errors.
    public func compacted<Wrapped: Sendable>(
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<Wrapped> where Value == Wrapped? {
        derive(on: .synchronous, cancellationToken: cancellationToken) { result, derived in
            switch result {
            case .success(let value?): derived.publish(.success(value))
            case .success(nil): break
            case .failure(let error): derived.publish(.failure(error))
            }
        }
    }
}
