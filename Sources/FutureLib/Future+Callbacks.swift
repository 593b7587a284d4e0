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
    /// ### Cancellation is not a failure to report, by default
    /// A future that failed with `CancellationError` (its work was cancelled) does not call `f`,
    /// unless `policy` is ``ErrorPolicy/allErrors``: someone chose to stop it. The continuation's
    /// own token is different: when it fires first, `f` is called once with `CancellationError`,
    /// whatever the policy.
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Removes `f` early; it then gets `CancellationError`.
    ///   - policy: Which failures reach `f`: by default every error but a `CancellationError` that
    ///     the future failed with (the token's own `CancellationError` always does). See ``ErrorPolicy``.
    ///   - f: The continuation.
    @inlinable
    public func onFailure(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ f: @escaping @Sendable (any Error) -> Void
    ) {
        let f = policy.filtering(f, cancellationToken: cancellationToken)
        observe(on: context, cancellationToken: cancellationToken, .error(f))
    }
}
