import Synchronization

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

    // MARK: - Registration

    /// Registers `callback` to run on `context` with the result, or with `CancellationError` when
    /// `cancellationToken` fires first.
    @inlinable
    func observe(on context: some ExecutionContext, cancellationToken: CancellationToken, _ callback: Callback<Value>) {
        observe(target: ContinuationTarget(context), cancellationToken: cancellationToken, callback)
    }

    /// Registers `callback` to run on `target`; see ``observe(on:cancellationToken:_:)``.
    @inlinable
    func observe(target: ContinuationTarget, cancellationToken: CancellationToken, _ callback: Callback<Value>) {
        if cancellationToken.isCancellationRequested {
            cancelled(Continuation(target: target, callback: callback))
            return
        }
        // A completed future dispatches at once (or queues behind the completer): no token handler.
        guard !isCompleted, cancellationToken.canBeCancelled else {
            add(target: target, callback: callback)
            return
        }
        let cancellable = CancellableCallback(callback, of: self)
        guard add(target: target, callback: .cancellable(cancellable)) else { return }
        // The handler captures only the box, which is then its closure context: no second allocation.
        let registration = cancellationToken.onCancel { cancellable.cancel() }
        if !withState({ $0.attach(registration, to: cancellable) }) {
            registration.unregister()  // completed or cancelled meanwhile: release the handler
        }
    }

    /// Stores a continuation, or dispatches it when the future is complete; true if stored.
    @inlinable @discardableResult
    func add(target: ContinuationTarget, callback: Callback<Value>) -> Bool {
        switch withState({ $0.add(target: target, callback: callback) }) {
        case .stored:
            return true
        case .dispatch(let result):
            Continuation(target: target, callback: callback).dispatch(result)
            return false
        case .queued:
            return false  // the completing thread dispatches it after the earlier continuations
        }
    }

    @inlinable
    func cancelled(_ continuation: Continuation<Value>) {
        guard continuation.callback.takesErrors else { return }  // onSuccess is never called
        continuation.dispatch(.failure(CancellationError()))
    }
}
