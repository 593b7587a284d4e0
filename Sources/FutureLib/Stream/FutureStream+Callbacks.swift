extension FutureStream {
    /// Calls `f` with every result of the stream: the kept ones first, then each new one.
    ///
    /// ```swift
    /// let stop = CancellationRequest()
    /// locations.onComplete(on: DispatchQueue.main, cancellationToken: stop.token) { result in
    ///     switch result {
    ///     case .success(let location): map.center = location
    ///     case .failure(let error): report(error)
    ///     }
    /// }
    /// stop.cancel()  // unsubscribes; `f` gets one `CancellationError` and is released
    /// ```
    ///
    /// ### Semantics
    /// - `f` gets each result exactly once, in the stream's order, on `context`, one call at a
    ///   time (also on a concurrent context). Results kept by the stream (its ``capacity``) come
    ///   first; see ``FutureStream`` for the policy.
    /// - When the stream finishes, `f` gets the results still on their way, then is released.
    /// - When `cancellationToken` is cancelled, `f` is unsubscribed at once: results not yet
    ///   delivered are dropped, `f` is called once more with `CancellationError`, then released.
    ///   A token that is already cancelled gives just that one call. The stream and its other
    ///   subscribers are unaffected.
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f`; it then gets `CancellationError`.
    ///   - f: The handler.
    @inlinable
    public func onComplete(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        subscribe(on: context, cancellationToken: cancellationToken) { event in
            switch event {
            case .result(let result): f(result)
            case .cancelled: f(.failure(CancellationError()))
            case .finished: break
            }
        }
    }

    /// Calls `f` with every value of the stream (errors are skipped).
    ///
    /// ```swift
    /// accelerations.onSuccess(on: DispatchQueue.main) { acceleration in
    ///     needle.angle = acceleration.x
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``onComplete(on:cancellationToken:_:)-(ExecutionContext,_,_)``, except that `f` gets only the values: never an
    /// error, and nothing when `cancellationToken` is cancelled (it is just unsubscribed and released).
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f`.
    ///   - f: The handler.
    @inlinable
    public func onSuccess(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (Value) -> Void
    ) {
        subscribe(on: context, cancellationToken: cancellationToken) { event in
            if case .result(.success(let value)) = event { f(value) }
        }
    }

    /// Calls `f` with every error of the stream (values are skipped).
    ///
    /// ```swift
    /// accelerations.onFailure { error in logger.warning("sensor: \(error)") }
    /// ```
    ///
    /// ### Semantics
    /// As ``onComplete(on:cancellationToken:_:)-(ExecutionContext,_,_)``, except that `f` gets only the errors, including
    /// one `CancellationError` when `cancellationToken` is cancelled.
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f`; it then gets `CancellationError`.
    ///   - f: The handler.
    @inlinable
    public func onFailure(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (any Error) -> Void
    ) {
        subscribe(on: context, cancellationToken: cancellationToken) { event in
            switch event {
            case .result(.failure(let error)): f(error)
            case .cancelled: f(CancellationError())
            case .result(.success), .finished: break
            }
        }
    }

    /// Calls `f` once when the stream finishes (at once, on `context`, if it has finished already).
    ///
    /// ```swift
    /// downloads.onFinish(on: DispatchQueue.main) { spinner.stopAnimating() }
    /// ```
    ///
    /// ### Semantics
    /// - `f` runs exactly once, on `context`, after the stream finished. Handlers registered
    ///   earlier on the same serial context have then had all their results.
    /// - When `cancellationToken` is cancelled first, `f` is never called and is released.
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f`.
    ///   - f: The handler.
    @inlinable
    public func onFinish(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable () -> Void
    ) {
        subscribe(on: context, cancellationToken: cancellationToken, wantsResults: false) { event in
            if case .finished = event { f() }
        }
    }
}
