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
    /// - If it is cancelled after the future completed but before `f` started (its job still
    ///   queued on `context`), `f` gets `CancellationError` instead of the result.
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

// MARK: - Async closures

// Each closure runs in a task of its own on FutureLib's threads (or the context's), which the
// token cancels. A closure literal with no `await` picks the synchronous form above.

extension Future {
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
        // What it buys: two closure contexts fewer per call (guarded by Benchmarks/Rounds).
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
        // As in `onComplete` above.
        if context.isDefault || context.isSynchronous, !cancellationToken.canBeCancelled {
            onSuccess(on: .synchronous) { value in TaskPlacement.startOnPool { await f(value) } }
            return
        }
        onSuccess(at: .on(context), cancellationToken: cancellationToken) { value in await f(value) }
    }

    /// Calls async `f` with the error, in a task, when the future fails.
    ///
    /// ```swift
    /// Future<Int>(error: FutureError.timeout).onFailure { error in
    ///     try? await Task.sleep(for: .milliseconds(1))
    ///     print(error)
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `onFailure(on:cancellationToken:policy:_:)`, except that `f` runs
    /// in a task of its own, which the token cancels. Whether there is an error to start the task
    /// for is decided when the future completes: a success, or an error `policy` leaves alone,
    /// starts none, and a token cancelled afterwards calls nothing.
    ///
    /// - Parameters:
    ///   - context: Where the task's jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Removes `f` early (it then gets `CancellationError`), or cancels its task.
    ///   - policy: Which failures reach `f`: by default every error but a `CancellationError` that
    ///     the future failed with (the token's own `CancellationError` always does). See ``ErrorPolicy``.
    ///   - f: The continuation.
    @inlinable
    public func onFailure(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ f: @escaping @Sendable @concurrent (any Error) async -> Void
    ) {
        onFailure(at: .on(context), cancellationToken: cancellationToken, policy: policy) { error in await f(error) }
    }
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form (see Internals.md,
// "One combinator, every form").

extension Future {
    /// Calls `f` with the result, on the main actor, when the future completes.
    ///
    /// ```swift
    /// @MainActor final class DownloadModel {
    ///     var status = ""
    ///     func track(_ download: Future<Int>) {
    ///         download.onComplete(on: .mainActor) { result in
    ///             self.status = (try? result.get()).map { "\($0) bytes" } ?? "failed"
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``onComplete(on:cancellationToken:_:)``; `f` runs on the main actor, in registration
    /// order with the other continuations on `.mainActor`.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Removes `f` early; it then gets `CancellationError`.
    ///   - f: The continuation.
    public func onComplete(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor (Result<Value, any Error>) -> Void
    ) {
        onComplete(on: context.queue, cancellationToken: cancellationToken) { result in
            MainActor.assumeIsolated { f(result) }
        }
    }

    /// Calls `f` with the value, on the main actor, when the future succeeds.
    ///
    /// ```swift
    /// @MainActor final class NameModel {
    ///     var text = ""
    ///     func show(_ name: Future<String>) { name.onSuccess(on: .mainActor) { self.text = $0 } }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``onSuccess(on:cancellationToken:_:)``; `f` runs on the main actor.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Removes `f` early; it is then never called.
    ///   - f: The continuation.
    public func onSuccess(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor (Value) -> Void
    ) {
        onSuccess(on: context.queue, cancellationToken: cancellationToken) { value in
            MainActor.assumeIsolated { f(value) }
        }
    }

    /// Calls `f` with the error, on the main actor, when the future fails.
    ///
    /// ```swift
    /// @MainActor final class ErrorBanner {
    ///     var message: String?
    ///     func watch(_ upload: Future<Int>) { upload.onFailure(on: .mainActor) { self.message = "\($0)" } }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``onFailure(on:cancellationToken:policy:_:)``: also called once with `CancellationError`, on
    /// the main actor, when `cancellationToken` is cancelled first.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Removes `f` early; it then gets `CancellationError`.
    ///   - policy: Which failures reach `f`: by default every error but a `CancellationError` that
    ///     the future failed with (the token's own `CancellationError` always does). See ``ErrorPolicy``.
    ///   - f: The continuation.
    public func onFailure(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ f: @escaping @MainActor (any Error) -> Void
    ) {
        onFailure(on: context.queue, cancellationToken: cancellationToken, policy: policy) { error in
            MainActor.assumeIsolated { f(error) }
        }
    }
}

// MARK: - Async closures on the main actor

// Each closure runs in a task on the main actor, which the token cancels.

extension Future {
    /// Calls async `f` with the result, in a task on the main actor, when the future completes.
    ///
    /// ```swift
    /// Future(value: 3).onComplete(on: .mainActor) { result in
    ///     await Task.yield()
    ///     print(result)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Removes `f` early (it then gets `CancellationError`), or cancels its task.
    ///   - f: The continuation.
    public func onComplete(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor (Result<Value, any Error>) async -> Void
    ) {
        onComplete(at: .mainActor, cancellationToken: cancellationToken) { result in await f(result) }
    }

    /// Calls async `f` with the value, in a task on the main actor, when the future succeeds.
    ///
    /// ```swift
    /// Future(value: 3).onSuccess(on: .mainActor) { value in
    ///     await Task.yield()
    ///     print(value)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Removes `f` early (it is then never called), or cancels its task.
    ///   - f: The continuation.
    public func onSuccess(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor (Value) async -> Void
    ) {
        onSuccess(at: .mainActor, cancellationToken: cancellationToken) { value in await f(value) }
    }

    /// Calls async `f` with the error, in a task on the main actor, when the future fails.
    ///
    /// ```swift
    /// Future<Int>(error: FutureError.timeout).onFailure(on: .mainActor) { error in
    ///     await Task.yield()
    ///     print(error)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Removes `f` early (it then gets `CancellationError`), or cancels its task.
    ///   - policy: Which failures reach `f`: by default every error but a `CancellationError` that
    ///     the future failed with (the token's own `CancellationError` always does). See ``ErrorPolicy``.
    ///   - f: The continuation.
    public func onFailure(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ f: @escaping @MainActor (any Error) async -> Void
    ) {
        onFailure(at: .mainActor, cancellationToken: cancellationToken, policy: policy) { error in await f(error) }
    }
}

// MARK: - Isolated to an actor

// Each closure gets the actor as an `isolated` parameter and runs in a task that enters it.

extension Future {
    /// Calls `f` with the result, isolated to `actor`, when the future completes.
    ///
    /// ```swift
    /// actor Cache {
    ///     var values: [String: Int] = [:]
    ///     func load(_ key: String, from future: Future<Int>) {
    ///         future.onComplete(on: self) { cache, result in cache.values[key] = try? result.get() }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// - `f` runs exactly once, isolated to `actor`, in a task that starts on FutureLib's own
    ///   threads; a default actor then runs it there too, never needing Swift's cooperative pool.
    /// - Each continuation enters the actor on its own: no order between them is promised.
    /// - A token cancelled before the future completes removes `f` at once; it is then called
    ///   with `CancellationError`, on the actor.
    ///
    /// - Parameters:
    ///   - actor: The actor `f` is isolated to.
    ///   - cancellationToken: Removes `f` early; it then gets `CancellationError`.
    ///   - f: The continuation; its first parameter is `actor`, isolated.
    public func onComplete<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (isolated A, Result<Value, any Error>) -> Void
    ) {
        onComplete(at: .pool, cancellationToken: cancellationToken) { result in await f(actor, result) }
    }

    /// Calls `f` with the value, isolated to `actor`, when the future succeeds.
    ///
    /// ```swift
    /// actor Scores {
    ///     var best = 0
    ///     func track(_ score: Future<Int>) {
    ///         score.onSuccess(on: self) { scores, value in scores.best = max(scores.best, value) }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``onComplete(on:cancellationToken:_:)-(A,_,_)``, except that `f` is called only for a
    /// success, and never when `cancellationToken` is cancelled first.
    ///
    /// - Parameters:
    ///   - actor: The actor `f` is isolated to.
    ///   - cancellationToken: Removes `f` early; it is then never called.
    ///   - f: The continuation; its first parameter is `actor`, isolated.
    public func onSuccess<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (isolated A, Value) -> Void
    ) {
        onSuccess(at: .pool, cancellationToken: cancellationToken) { value in await f(actor, value) }
    }

    /// Calls `f` with the error, isolated to `actor`, when the future fails.
    ///
    /// ```swift
    /// actor ErrorLog {
    ///     var errors: [String] = []
    ///     func watch(_ upload: Future<Int>) {
    ///         upload.onFailure(on: self) { log, error in log.errors.append("\(error)") }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``onComplete(on:cancellationToken:_:)-(A,_,_)``, except that `f` is called only for a
    /// failure, including `CancellationError` when `cancellationToken` is cancelled first. Whether
    /// there is an error to start the task for is decided when the future completes: a success, or
    /// an error `policy` leaves alone, starts none, and a token cancelled afterwards calls nothing.
    ///
    /// - Parameters:
    ///   - actor: The actor `f` is isolated to.
    ///   - cancellationToken: Removes `f` early; it then gets `CancellationError`.
    ///   - policy: Which failures reach `f`: by default every error but a `CancellationError` that
    ///     the future failed with (the token's own `CancellationError` always does). See ``ErrorPolicy``.
    ///   - f: The continuation; its first parameter is `actor`, isolated.
    public func onFailure<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ f: @escaping @Sendable (isolated A, any Error) -> Void
    ) {
        onFailure(at: .pool, cancellationToken: cancellationToken, policy: policy) { error in await f(actor, error) }
    }
}
