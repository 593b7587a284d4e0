extension Future {
    /// Calls `f` with the result when the future completes.
    ///
    /// ```swift
    /// download.onComplete(on: DispatchQueue.main) { result in
    ///     switch result {
    ///     case .success(let data): show(data)
    ///     case .failure(let error as CancellationError): _ = error  // the user gave up
    ///     case .failure(let error): report(error)
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// - `f` runs exactly once, on `context`. On a serial context, continuations run in
    ///   registration order. If the future is already complete, `f` is dispatched at once.
    /// - If `cancellationToken` is cancelled before the future completes, `f` is unregistered at
    ///   once (and released) and called once with `CancellationError`. A token that is already
    ///   cancelled wins even over a result that already exists. The future itself is not completed
    ///   by that cancellation; other continuations are unaffected.
    /// - Racing completion and cancellation, exactly one of the two reaches `f`.
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Removes `f` early; it then gets `CancellationError`.
    ///   - f: The continuation.
    @inlinable
    public func onComplete(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        observe(on: context, cancellationToken: cancellationToken, .result(f))
    }

    /// Calls `f` with the value when the future succeeds.
    ///
    /// SimpleFutures called it `forEach`.
    ///
    /// ```swift
    /// user.onSuccess(on: DispatchQueue.main) { user in nameLabel.text = user.name }
    /// ```
    ///
    /// ### Semantics
    /// As ``onComplete(on:cancellationToken:_:)-xald``, except that `f` is called only for a success:
    /// never for a failure, and never when `cancellationToken` is cancelled first.
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Removes `f` early; it is then never called.
    ///   - f: The continuation.
    @inlinable
    public func onSuccess(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (Value) -> Void
    ) {
        observe(on: context, cancellationToken: cancellationToken, .value(f))
    }

    /// Calls `f` with the error when the future fails.
    ///
    /// ```swift
    /// upload.onFailure { error in logger.error("upload failed: \(error)") }
    /// ```
    ///
    /// ### Semantics
    /// As ``onComplete(on:cancellationToken:_:)-xald``, except that `f` is called only for a failure,
    /// including once with `CancellationError` when `cancellationToken` is cancelled first.
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Removes `f` early; it then gets `CancellationError`.
    ///   - f: The continuation.
    @inlinable
    public func onFailure(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (any Error) -> Void
    ) {
        observe(on: context, cancellationToken: cancellationToken, .error(f))
    }
}
