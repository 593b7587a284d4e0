extension Future {
    /// Transforms the value with `transform` when the future succeeds.
    ///
    /// A failure passes through without calling `transform`; if `transform` throws, the new
    /// future fails with that error.
    ///
    /// ```swift
    /// let name: Future<String> = fetchUser(id).map { $0.name }
    /// ```
    ///
    /// ### Cancellation
    /// When `cancellationToken` is cancelled before `transform` runs, the new future fails with
    /// `CancellationError` at once and `transform` is never called. The same holds for every
    /// combinator.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - transform: Turns the value into the new value.
    /// - Returns: A future of the transformed value.
    @inlinable
    public func map<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Value) throws -> U
    ) -> Future<U> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            derived.complete(with: Result { try transform(result.get()) })
        }
    }

    /// Continues with the future that `transform` returns for the value.
    ///
    /// Use it to chain dependent asynchronous steps. A failure passes through without calling
    /// `transform`.
    ///
    /// ```swift
    /// let avatar: Future<Image> = fetchUser(id).flatMap { user in fetchImage(user.avatarURL) }
    /// ```
    ///
    /// ### Cancellation
    /// A cancelled token fails the new future with `CancellationError` at once, also while it is
    /// waiting for the inner future (which itself is not cancelled: give it the token too).
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - transform: Starts the next step.
    /// - Returns: A future of the inner future's result.
    @inlinable
    public func flatMap<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Value) throws -> Future<U>
    ) -> Future<U> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            do {
                derived.complete(with: try transform(result.get()), cancellationToken: cancellationToken)
            } catch {
                derived.complete(with: .failure(error))
            }
        }
    }

    /// Keeps the value only if it satisfies `isIncluded`; otherwise fails with ``FutureError/noSuchElement``.
    ///
    /// SimpleFutures called it `withFilter`.
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

    /// Delivers the result on `context`: continuations of the new future are chained there.
    ///
    /// Futura's `switch(to:)` for a chain built at once. Equivalent to `andThen(on: context) { _ in }`.
    /// A `.synchronous` continuation runs on `context` only if it is added before the new future
    /// completes; added later, it runs on the thread that adds it. To run a handler on a context
    /// for sure, pass the context to the handler: `onSuccess(on: DispatchQueue.main) { … }`.
    ///
    /// ```swift
    /// fetchUser(id)
    ///     .hop(to: DispatchQueue.main)
    ///     .onSuccess(on: .synchronous) { user in nameLabel.text = user.name }  // on the main queue
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where the new future is completed.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    /// - Returns: A future of the same result, completed on `context`.
    @inlinable
    public func hop(
        to context: some ExecutionContext,
        cancellationToken: CancellationToken = .none
    ) -> Future<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            derived.complete(with: result)
        }
    }
}
