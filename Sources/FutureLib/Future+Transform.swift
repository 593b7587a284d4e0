// `filter`, `transform`, `mapError` and `andThen`: what a future's result becomes besides `map`.
// They have a context form and a main-actor form, no async one (the forms table's note ¹ in
// Documentation/Futures.md: a `map` or `recover` in that form gets what they would await).

extension Future {
    /// Keeps the value only if it satisfies `isIncluded`; otherwise fails with ``FutureError/noSuchElement``.
    ///
    /// ```swift
    /// let adult = fetchUser(id).filter { $0.age >= 18 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where `isIncluded` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - isIncluded: The test the value must pass.
    /// - Returns: A future of the same value, or failing with ``FutureError/noSuchElement`` when
    ///   the test fails.
    @inlinable
    public func filter(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ isIncluded: @escaping @Sendable (Value) throws -> Bool
    ) -> Future<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            derived.complete(
                with: Result {
                    let value = try result.get()
                    guard try isIncluded(value) else { throw FutureError.noSuchElement }
                    return value
                }
            )
        }
    }

    /// Transforms a success with `success` and a failure with `failure`.
    ///
    /// The two sides are symmetric: each closure maps its own side (a value to a new value, an
    /// error to a new error), and each may throw, which fails the new future with the thrown
    /// error. Neither side can cross over: to turn a failure into a value, use
    /// ``recover(on:cancellationToken:policy:_:)-1pnec``, or ``transform(on:cancellationToken:_:)-(ExecutionContext,_,_)`` for both directions.
    ///
    /// ```swift
    /// let reply = fetchUser(id).transform(success: { "Hello, \($0.name)" }, failure: { APIError(wrapping: $0) })
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where the closures run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - success: Turns the value into the new value, or throws the error to fail with.
    ///   - failure: Turns the error into the new error (returned or thrown: the same).
    /// - Returns: A future of the transformed value or error.
    @inlinable
    public func transform<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        success: @escaping @Sendable (Value) throws -> U,
        failure: @escaping @Sendable (any Error) throws -> any Error
    ) -> Future<U> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            switch result {
            case .success(let value):
                derived.complete(with: Result { try success(value) })
            case .failure(let error):
                do {
                    derived.complete(with: .failure(try failure(error)))
                } catch {
                    derived.complete(with: .failure(error))
                }
            }
        }
    }

    /// Transforms the whole result with `transform`: a success may become a failure and back.
    ///
    /// ```swift
    /// let status = ping(host).transform { result in .success((try? result.get()) == nil ? "down" : "up") }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - transform: Turns the result into the new result.
    /// - Returns: A future of the new result.
    @inlinable
    public func transform<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Result<Value, any Error>) throws -> Result<U, any Error>
    ) -> Future<U> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            derived.complete(with: Result { try transform(result) }.flatMap { $0 })
        }
    }

    /// Transforms the error with `transform` when the future fails.
    ///
    /// ```swift
    /// let user = fetchUser(id).mapError { APIError(underlying: $0) }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns the error into the new error.
    /// - Returns: A future of the same value, or the transformed error.
    @inlinable
    public func mapError(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @Sendable (any Error) -> any Error
    ) -> Future<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            derived.complete(with: result.mapError { policy.handles($0) ? transform($0) : $0 })
        }
    }

    /// Runs `sideEffect` with the result, then passes the result on unchanged.
    ///
    /// The new future completes after `sideEffect` returned, so steps chained with `andThen` run
    /// in order. The result is discardable: `andThen` is often used for its side effect alone.
    ///
    /// ### Not a cleanup that always runs
    /// `sideEffect` runs for a value and for an error (including a source that failed with
    /// `CancellationError`), but not when `cancellationToken` is cancelled first: like every
    /// combinator, `andThen` then fails at once without calling its closure. For cleanup that must
    /// run on every outcome, its own token's cancellation included, use ``ensure(on:cancellationToken:_:)-7osj1``.
    ///
    /// ```swift
    /// let data = download(url)
    ///     .andThen { _ in spinner.stop() }
    ///     .andThen { result in metrics.record(result) }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where `sideEffect` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first,
    ///     and then `sideEffect` is not called.
    ///   - sideEffect: Observes the result.
    /// - Returns: A future of the same result.
    @inlinable @discardableResult
    public func andThen(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ sideEffect: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) -> Future<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            sideEffect(result)
            derived.complete(with: result)
        }
    }
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form (see Internals.md,
// "One combinator, every form").

extension Future {
    /// Keeps the value only if `isIncluded`, called on the main actor, accepts it.
    ///
    /// ```swift
    /// @MainActor final class Filter {
    ///     var minimum = 3
    ///     func long(_ name: Future<String>) -> Future<String> {
    ///         name.filter(on: .mainActor) { $0.count >= self.minimum }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - isIncluded: The test the value must pass.
    /// - Returns: A future of the same value, or failing with ``FutureError/noSuchElement``.
    public func filter(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ isIncluded: @escaping @MainActor (Value) throws -> Bool
    ) -> Future<Value> {
        filter(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try isIncluded(value) }
        }
    }

    /// Transforms a success with `success` and a failure with `failure`, on the main actor.
    ///
    /// ```swift
    /// let label: Future<String> = Future(value: 1).transform(
    ///     on: .mainActor, success: { "\($0)" }, failure: { $0 })
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - success: Turns the value into the new value, or throws the error to fail with.
    ///   - failure: Turns the error into the new error (returned or thrown: the same).
    /// - Returns: A future of the transformed value or error.
    public func transform<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        success: @escaping @MainActor (Value) throws -> U,
        failure: @escaping @MainActor (any Error) throws -> any Error
    ) -> Future<U> {
        transform(
            on: context.queue,
            cancellationToken: cancellationToken,
            success: { value in try MainActor.assumeIsolated { try success(value) } },
            failure: { error in try MainActor.assumeIsolated { try failure(error) } }
        )
    }

    /// Transforms the whole result with `transform`, on the main actor.
    ///
    /// ```swift
    /// let status: Future<String> = Future(value: 1).transform(on: .mainActor) { .success("\($0)") }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - transform: Turns the result into the new result.
    /// - Returns: A future of the new result.
    public func transform<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Result<Value, any Error>) throws -> Result<U, any Error>
    ) -> Future<U> {
        self.transform(on: context.queue, cancellationToken: cancellationToken) { result in
            try MainActor.assumeIsolated { try transform(result) }
        }
    }

    /// Transforms the error with `transform`, on the main actor.
    ///
    /// ```swift
    /// let user: Future<Int> = Future(value: 1).mapError(on: .mainActor) { $0 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - policy: Which errors reach `transform`: by default every error but `CancellationError`,
    ///     which passes on unchanged. See ``ErrorPolicy``.
    ///   - transform: Turns the error into the new error.
    /// - Returns: A future of the same value, or the transformed error.
    public func mapError(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ transform: @escaping @MainActor (any Error) -> any Error
    ) -> Future<Value> {
        mapError(on: context.queue, cancellationToken: cancellationToken, policy: policy) { error in
            MainActor.assumeIsolated { transform(error) }
        }
    }

    /// Runs `sideEffect` with the result on the main actor, then passes the result on unchanged.
    ///
    /// ```swift
    /// @MainActor final class Spinner {
    ///     var isSpinning = true
    ///     func stop<T>(after work: Future<T>) -> Future<T> {
    ///         work.andThen(on: .mainActor) { _ in self.isSpinning = false }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first,
    ///     and then `sideEffect` is not called.
    ///   - sideEffect: Observes the result.
    /// - Returns: A future of the same result.
    @discardableResult
    public func andThen(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ sideEffect: @escaping @MainActor (Result<Value, any Error>) -> Void
    ) -> Future<Value> {
        andThen(on: context.queue, cancellationToken: cancellationToken) { result in
            MainActor.assumeIsolated { sideEffect(result) }
        }
    }
}
