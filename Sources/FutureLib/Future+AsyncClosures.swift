// Async closures in the combinators and continuations. Each closure runs in a task of its own,
// on FutureLib's threads (or the `on:` context's, or the main actor), which the token cancels.
//
// Overload resolution: a closure literal that contains no `await` is synchronous and picks the
// synchronous form; one that awaits picks these. To force the async form without an `await`, spell
// the closure's effect: `{ value async in … }`; to force the synchronous form, pass a synchronous
// function or closure.

extension Future {
    /// Transforms the value with async `transform`, run in a task.
    ///
    /// ```swift
    /// @Sendable func enrich(_ id: Int) async throws -> String { "user \(id)" }
    /// let request = CancellationRequest()
    /// let profile: Future<String> = Future(value: 7).map(cancellationToken: request.token) { try await enrich($0) }
    /// ```
    ///
    /// ### Where it runs
    /// In a new task whose jobs run on `context`; `.default` and `.synchronous` mean FutureLib's
    /// own threads, never Swift's cooperative pool. A failure passes through without a task.
    ///
    /// ### Cancellation
    /// A token cancelled before the source completes fails the new future at once and `transform`
    /// never starts. Cancelled while `transform` runs, the token cancels its task (it sees
    /// `Task.isCancelled`) and fails the new future with `CancellationError` at once, without
    /// waiting for the task to finish; what it returns later is dropped.
    ///
    /// - Parameters:
    ///   - context: Where the task's jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and fails the new future with `CancellationError`.
    ///   - transform: Turns the value into the new value.
    /// - Returns: A future of the transformed value.
    @inlinable  // specialized in the caller, as `Future { async … }` is (Benchmarks/Rounds scenario 9)
    public func map<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable @concurrent (Value) async throws -> U
    ) -> Future<U> {
        deriveAsync(at: .on(context), cancellationToken: cancellationToken) { result in
            result.asyncStep { value in try await transform(value) }
        }
    }

    /// Continues with the future that async `transform` returns, run in a task.
    ///
    /// ```swift
    /// let next: Future<Int> = Future(value: 1).flatMap { value in
    ///     try await Task.sleep(for: .milliseconds(1))
    ///     return Future(value: value + 1)
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// As ``map(on:cancellationToken:_:)-8eniy``; the token also stops the
    /// wait for the inner future.
    ///
    /// - Parameters:
    ///   - context: Where the task's jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and fails the new future with `CancellationError`.
    ///   - transform: Starts the next step.
    /// - Returns: A future of the inner future's result.
    @inlinable  // specialized in the caller, as async `map` is (Benchmarks/Rounds scenario 9-flatMap)
    public func flatMap<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable @concurrent (Value) async throws -> Future<U>
    ) -> Future<U> {
        deriveAsync(at: .on(context), cancellationToken: cancellationToken) { result in
            result.asyncStep { value in try await transform(value).value() }
        }
    }

    /// Turns a failure into a value with async `transform`, run in a task; a success passes through.
    ///
    /// ```swift
    /// let cached: Future<Int> = Future<Int>(error: CancellationError()).recover { _ in
    ///     try await Task.sleep(for: .milliseconds(1))
    ///     return 0
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// As ``map(on:cancellationToken:_:)-8eniy``: the token's cancellation
    /// is never turned into a value.
    ///
    /// - Parameters:
    ///   - context: Where the task's jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and fails the new future with `CancellationError`.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns the error into a value, or throws the error to fail with.
    /// - Returns: A future that succeeds with the value or the recovered value.
    @inlinable  // specialized in the caller, as async `map` is (Benchmarks/Rounds scenario 9-recover)
    public func recover(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable @concurrent (any Error) async throws -> Value
    ) -> Future<Value> {
        deriveAsync(at: .on(context), cancellationToken: cancellationToken) { result in
            result.asyncRecoveryStep(policy: policy) { error in try await transform(error) }
        }
    }

    /// Turns a failure into the result of the future that async `transform` returns.
    ///
    /// ```swift
    /// let page: Future<Int> = Future<Int>(error: CancellationError()).recoverWith { _ in
    ///     try await Task.sleep(for: .milliseconds(1))
    ///     return Future(value: 0)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where the task's jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and fails the new future with `CancellationError`.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Starts the fallback.
    /// - Returns: A future of the value, or of the fallback's result.
    @inlinable  // specialized in the caller, as async `recover` is (Benchmarks/Rounds scenario 9-recover)
    public func recoverWith(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable @concurrent (any Error) async throws -> Future<Value>
    ) -> Future<Value> {
        deriveAsync(at: .on(context), cancellationToken: cancellationToken) { result in
            result.asyncRecoveryStep(policy: policy) { error in try await transform(error).value() }
        }
    }

    /// Calls async `f` with the result, in a task, when the future completes.
    ///
    /// ```swift
    /// Future(value: 3).onComplete { result in
    ///     try? await Task.sleep(for: .milliseconds(1))
    ///     print(result)
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``onComplete(on:cancellationToken:_:)``, except that `f` runs in a task of its own
    /// (see ``map(on:cancellationToken:_:)-8eniy``). A token cancelled
    /// first calls `f` with `CancellationError`; cancelled while `f` runs, it cancels `f`'s task.
    ///
    /// - Parameters:
    ///   - context: Where the task's jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Removes `f` early (it then gets `CancellationError`), or cancels its task.
    ///   - f: The continuation.
    @inlinable  // specialized in the caller: no generic metadata lookups when the future completes
    public func onComplete(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable @concurrent (Result<Value, any Error>) async -> Void
    ) {
        // A token that can never fire, on FutureLib's pool: the task calls `f` itself, with no
        // `withCancellation`, no token check and no closure dropping `f`'s `@concurrent` around it.
        // What it buys: 2 closure contexts fewer per call (Benchmarks/Rounds scenario 9-onSuccess,
        // 10.5 → 8.6 mallocs, as many as `Future { async }` resuming the same continuation).
        if context.isDefault || context.isSynchronous, !cancellationToken.canBeCancelled {
            onComplete(on: .synchronous) { result in TaskPlacement.startOnPool { await f(result) } }
            return
        }
        onComplete(at: .on(context), cancellationToken: cancellationToken) { result in await f(result) }
    }

    /// Calls async `f` with the value, in a task, when the future succeeds.
    ///
    /// ```swift
    /// Future(value: 3).onSuccess { value in
    ///     try? await Task.sleep(for: .milliseconds(1))
    ///     print(value)
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``onSuccess(on:cancellationToken:_:)``, except that `f` runs in a task of its own, which
    /// the token cancels.
    ///
    /// - Parameters:
    ///   - context: Where the task's jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Removes `f` early (it is then never called), or cancels its task.
    ///   - f: The continuation.
    @inlinable  // specialized in the caller: no generic metadata lookups when the future completes
    public func onSuccess(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable @concurrent (Value) async -> Void
    ) {
        // As in `onComplete` above (scenario 9-onSuccess, 10.5 → 8.6 mallocs).
        if context.isDefault || context.isSynchronous, !cancellationToken.canBeCancelled {
            onSuccess(on: .synchronous) { value in TaskPlacement.startOnPool { await f(value) } }
            return
        }
        onSuccess(at: .on(context), cancellationToken: cancellationToken) { value in await f(value) }
    }

    // MARK: - Shared by the contexts and the main actor

    // Inlinable so that the public async `onComplete` and `onSuccess` above are specialized in the
    // caller, with the continuation and the task body they build.

    @inlinable
    func onComplete(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ f: @escaping @Sendable (Result<Value, any Error>) async -> Void
    ) {
        onComplete(on: .synchronous, cancellationToken: cancellationToken) { result in
            placement.start(cancellationToken: cancellationToken) {
                // Cancelled between the result and the task's start: the token wins, as on a context.
                await f(cancellationToken.isCancellationRequested ? .failure(CancellationError()) : result)
            }
        }
    }

    @inlinable
    func onSuccess(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ f: @escaping @Sendable (Value) async -> Void
    ) {
        onSuccess(on: .synchronous, cancellationToken: cancellationToken) { value in
            placement.start(cancellationToken: cancellationToken) {
                if !cancellationToken.isCancellationRequested { await f(value) }
            }
        }
    }
}

extension Result where Success: Sendable, Failure == any Error {
    /// `map`'s step: a failure passes on at once; a value runs `transform` in a task.
    @inlinable
    func asyncStep<U: Sendable>(_ transform: @escaping @Sendable (Success) async throws -> U) -> AsyncStep<U> {
        switch self {
        case .success(let value): .run { try await transform(value) }
        case .failure(let error): .done(.failure(error))
        }
    }

    /// `recover`'s step: a value, or an error `policy` leaves alone, passes on at once; a failure
    /// runs `transform` in a task.
    @inlinable
    func asyncRecoveryStep(
        policy: ErrorPolicy,
        _ transform: @escaping @Sendable (any Error) async throws -> Success
    ) -> AsyncStep<Success> {
        switch self {
        case .failure(let error) where policy.handles(error): .run { try await transform(error) }
        case .success, .failure: .done(self)
        }
    }
}
