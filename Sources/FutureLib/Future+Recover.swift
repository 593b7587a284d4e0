extension Future {
    /// Turns a failure into a value with `transform`; a success passes through.
    ///
    /// ```swift
    /// let settings = loadSettings().recover { _ in .defaults }
    /// ```
    ///
    /// ### Cancellation
    /// A cancelled token fails the new future with `CancellationError` and `transform` is never
    /// called: `recover` does not turn the token's cancellation into a value. A source that itself
    /// failed with `CancellationError` passes it on too, unless `policy` is ``ErrorPolicy/allErrors``:
    /// cancellation is not an error to recover from by default.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns the error into a value, or throws the error to fail with.
    /// - Returns: A future that succeeds with the value or the recovered value.
    @inlinable
    public func recover(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (any Error) throws -> Value
    ) -> Future<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            switch result {
            case .failure(let error) where policy.handles(error):
                derived.complete(with: Result { try transform(error) })
            case .success, .failure:
                derived.complete(with: result)
            }
        }
    }

    /// Turns a failure into the result of the future that `transform` returns; a success passes through.
    ///
    /// ```swift
    /// let page = fetch(primaryURL).recoverWith { _ in fetch(mirrorURL) }
    /// ```
    ///
    /// ### Cancellation
    /// A cancelled token fails the new future with `CancellationError` at once, also while it is
    /// waiting for the inner future, and `transform` is never called after cancellation. A source
    /// that failed with `CancellationError` passes it on, unless `policy` is ``ErrorPolicy/allErrors``.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Starts the fallback.
    /// - Returns: A future of the value, or of the fallback's result.
    @inlinable
    public func recoverWith(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (any Error) throws -> Future<Value>
    ) -> Future<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            guard case .failure(let error) = result, policy.handles(error) else {
                derived.complete(with: result)
                return
            }
            do {
                derived.complete(with: try transform(error), cancellationToken: cancellationToken)
            } catch {
                derived.complete(with: .failure(error))
            }
        }
    }
}
