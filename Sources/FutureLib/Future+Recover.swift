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

// MARK: - Async closures

// Each closure runs in a task of its own on FutureLib's threads (or the context's), which the
// token cancels. A closure literal with no `await` picks the synchronous form above.

extension Future {
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
    @inlinable  // specialized in the caller, as async `map` is
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
    @inlinable  // specialized in the caller, as async `map` is
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
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form (see Internals.md,
// "One combinator, every form").

extension Future {
    /// Turns a failure into a value with `transform`, on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Settings {
    ///     var fallback = 10
    ///     func limit(_ loaded: Future<Int>) -> Future<Int> {
    ///         loaded.recover(on: .mainActor) { _ in self.fallback }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns the error into a value, or throws the error to fail with.
    /// - Returns: A future that succeeds with the value or the recovered value.
    public func recover(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) throws -> Value
    ) -> Future<Value> {
        recover(on: context.queue, cancellationToken: cancellationToken, policy: policy) { error in
            try MainActor.assumeIsolated { try transform(error) }
        }
    }

    /// Turns a failure into the result of the future that `transform`, called on the main actor, returns.
    ///
    /// ```swift
    /// let page: Future<Int> = Future<Int>(error: CancellationError())
    ///     .recoverWith(on: .mainActor) { _ in Future(value: 0) }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Starts the fallback.
    /// - Returns: A future of the value, or of the fallback's result.
    public func recoverWith(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) throws -> Future<Value>
    ) -> Future<Value> {
        recoverWith(on: context.queue, cancellationToken: cancellationToken, policy: policy) { error in
            try MainActor.assumeIsolated { try transform(error) }
        }
    }
}

// MARK: - Async closures on the main actor

// Each closure runs in a task on the main actor, which the token cancels.

extension Future {
    /// Turns a failure into a value with async `transform`, in a task on the main actor.
    ///
    /// ```swift
    /// let value: Future<Int> = Future<Int>(error: CancellationError()).recover(on: .mainActor) { _ in
    ///     await Task.yield()
    ///     return 0
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and fails the new future with `CancellationError`.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns the error into a value, or throws the error to fail with.
    /// - Returns: A future that succeeds with the value or the recovered value.
    public func recover(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) async throws -> Value
    ) -> Future<Value> {
        deriveAsync(at: .mainActor, cancellationToken: cancellationToken) { result in
            result.asyncRecoveryStep(policy: policy) { error in try await transform(error) }
        }
    }

    /// Turns a failure into the result of the future that async `transform` returns, called on the main actor.
    ///
    /// ```swift
    /// let value: Future<Int> = Future<Int>(error: CancellationError()).recoverWith(on: .mainActor) { _ in
    ///     await Task.yield()
    ///     return Future(value: 0)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and fails the new future with `CancellationError`.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Starts the fallback.
    /// - Returns: A future of the value, or of the fallback's result.
    public func recoverWith(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) async throws -> Future<Value>
    ) -> Future<Value> {
        deriveAsync(at: .mainActor, cancellationToken: cancellationToken) { result in
            result.asyncRecoveryStep(policy: policy) { error in try await transform(error).value() }
        }
    }
}

// MARK: - Isolated to an actor

// Each closure gets the actor as an `isolated` parameter and runs in a task that enters it.

extension Future {
    /// Turns a failure into a value with `transform`, isolated to `actor`.
    ///
    /// ```swift
    /// actor Fallbacks {
    ///     var lastGood = "cached"
    ///     func page(_ load: Future<String>) -> Future<String> {
    ///         load.recover(on: self) { fallbacks, _ in fallbacks.lastGood }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// A value passes on without calling `transform`. By `policy`, a `CancellationError` the
    /// future failed with passes on too (see ``ErrorPolicy``). A token cancelled first fails the new
    /// future with `CancellationError` at once and `transform` is never called.
    ///
    /// - Parameters:
    ///   - actor: The actor `transform` is isolated to.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - policy: Which errors reach `transform`; by default every error but `CancellationError`.
    ///   - transform: Turns the error into a value, or throws; its first parameter is `actor`, isolated.
    /// - Returns: A future of the value, or of the recovered value.
    public func recover<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (isolated A, any Error) throws -> Value
    ) -> Future<Value> {
        deriveAsync(at: .pool, cancellationToken: cancellationToken) { result in
            result.asyncRecoveryStep(policy: policy) { error in try await transform(actor, error) }
        }
    }

    /// Turns a failure into the result of another future, started by `transform` isolated to `actor`.
    ///
    /// ```swift
    /// actor Mirrors {
    ///     var backup = "mirror-b"
    ///     func download(_ primary: Future<Int>, from fetch: @escaping @Sendable (String) -> Future<Int>) -> Future<Int> {
    ///         primary.recoverWith(on: self) { mirrors, _ in fetch(mirrors.backup) }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``recover(on:cancellationToken:policy:_:)-(A,_,_,_)``, with a future to wait for.
    ///
    /// - Parameters:
    ///   - actor: The actor `transform` is isolated to.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - policy: Which errors reach `transform`; by default every error but `CancellationError`.
    ///   - transform: Returns the fallback future; its first parameter is `actor`, isolated.
    /// - Returns: A future of the value, or of the fallback's result.
    public func recoverWith<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (isolated A, any Error) throws -> Future<Value>
    ) -> Future<Value> {
        deriveAsync(at: .pool, cancellationToken: cancellationToken) { result in
            result.asyncRecoveryStep(policy: policy) { error in try await transform(actor, error).value() }
        }
    }
}
