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
        guard cancellationToken.canBeCancelled else {
            return deriveWithoutToken(on: context) { result, derived in
                derived.complete(with: Result { try transform(result.get()) })
            }
        }
        return derive(on: context, cancellationToken: cancellationToken, box: { MapCallback(transform, derived: $0) })
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
        guard cancellationToken.canBeCancelled else {
            return deriveWithoutToken(on: context) { result, derived in
                do {
                    derived.complete(with: try transform(result.get()), cancellationToken: cancellationToken)
                } catch {
                    derived.complete(with: .failure(error))
                }
            }
        }
        return derive(
            on: context,
            cancellationToken: cancellationToken,
            box: { FlatMapCallback(transform, derived: $0) }
        )
    }

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

    /// Delivers the result on `context`: continuations of the new future are chained there.
    ///
    /// Equivalent to `andThen(on: context) { _ in }`.
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

// MARK: - Async closures

// Each closure runs in a task of its own on FutureLib's threads (or the context's), which the
// token cancels. A closure literal with no `await` picks the synchronous form above.

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
    @inlinable  // specialized in the caller, as `Future { async … }` is (guarded by Benchmarks/Rounds)
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
    @inlinable  // specialized in the caller, as async `map` is
    public func flatMap<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable @concurrent (Value) async throws -> Future<U>
    ) -> Future<U> {
        deriveAsync(at: .on(context), cancellationToken: cancellationToken) { result in
            result.asyncStep { value in try await transform(value).value() }
        }
    }
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form (see Internals.md,
// "One combinator, every form").

extension Future {
    /// Transforms the value with `transform`, on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Counter {
    ///     var text = ""
    ///     func total(_ name: Future<String>) -> Future<Int> {
    ///         name.map(on: .mainActor) { self.text.count + $0.count }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - transform: Turns the value into the new value.
    /// - Returns: A future of the transformed value.
    public func map<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) throws -> U
    ) -> Future<U> {
        map(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try transform(value) }
        }
    }

    /// Continues with the future that `transform` returns, called on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Gallery {
    ///     var selected = 0
    ///     func image(_ ids: Future<[Int]>) -> Future<String> {
    ///         ids.flatMap(on: .mainActor) { ids in Future(value: "image \(ids[self.selected])") }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - transform: Starts the next step.
    /// - Returns: A future of the inner future's result.
    public func flatMap<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) throws -> Future<U>
    ) -> Future<U> {
        flatMap(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try transform(value) }
        }
    }

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

    /// Delivers the result on the main actor: the new future completes on the main queue.
    ///
    /// ```swift
    /// let onMain: Future<Int> = Future(value: 1).hop(to: .mainActor)
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    /// - Returns: A future of the same result, completed on the main actor.
    public func hop(
        to context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none
    ) -> Future<Value> {
        hop(to: context.queue, cancellationToken: cancellationToken)
    }
}

// MARK: - Async closures on the main actor

// Each closure runs in a task on the main actor, which the token cancels.

extension Future {
    /// Transforms the value with async `transform`, in a task on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Enricher {
    ///     var suffix = "!"
    ///     func loud(_ name: Future<String>) -> Future<String> {
    ///         name.map(on: .mainActor) { name in
    ///             try await Task.sleep(for: .milliseconds(1))
    ///             return name + self.suffix
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// As ``map(on:cancellationToken:_:)-8eniy``.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and fails the new future with `CancellationError`.
    ///   - transform: Turns the value into the new value.
    /// - Returns: A future of the transformed value.
    public func map<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) async throws -> U
    ) -> Future<U> {
        deriveAsync(at: .mainActor, cancellationToken: cancellationToken) { result in
            result.asyncStep { value in try await transform(value) }
        }
    }

    /// Continues with the future that async `transform` returns, called in a task on the main actor.
    ///
    /// ```swift
    /// let next: Future<Int> = Future(value: 1).flatMap(on: .mainActor) { value in
    ///     await Task.yield()
    ///     return Future(value: value + 1)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and fails the new future with `CancellationError`.
    ///   - transform: Starts the next step.
    /// - Returns: A future of the inner future's result.
    public func flatMap<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) async throws -> Future<U>
    ) -> Future<U> {
        deriveAsync(at: .mainActor, cancellationToken: cancellationToken) { result in
            result.asyncStep { value in try await transform(value).value() }
        }
    }
}

// MARK: - Isolated to an actor

// Each closure gets the actor as an `isolated` parameter and runs in a task that enters it.

extension Future {
    /// Transforms the value with `transform`, isolated to `actor`.
    ///
    /// ```swift
    /// actor Prices {
    ///     var rate = 2
    ///     func converted(_ amount: Future<Int>) -> Future<Int> {
    ///         amount.map(on: self) { prices, amount in amount * prices.rate }
    ///     }
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// As ``map(on:cancellationToken:_:)-8eniy``: a token cancelled first
    /// fails the new future with `CancellationError` at once and `transform` is never called.
    ///
    /// - Parameters:
    ///   - actor: The actor `transform` is isolated to.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - transform: Turns the value into the new value; its first parameter is `actor`, isolated.
    /// - Returns: A future of the transformed value.
    public func map<A: Actor, U: Sendable>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (isolated A, Value) throws -> U
    ) -> Future<U> {
        deriveAsync(at: .pool, cancellationToken: cancellationToken) { result in
            result.asyncStep { value in try await transform(actor, value) }
        }
    }

    /// Starts the next step with `transform`, isolated to `actor`, and completes with its result.
    ///
    /// ```swift
    /// actor Sessions {
    ///     var tokens: [Int: String] = [:]
    ///     func profile(of user: Future<Int>, fetch: @escaping @Sendable (String) -> Future<String>) -> Future<String> {
    ///         user.flatMap(on: self) { sessions, id in fetch(sessions.tokens[id] ?? "guest") }
    ///     }
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// A token cancelled first fails the new future with `CancellationError` at once: `transform`
    /// is never called, or the wait for its future ends.
    ///
    /// - Parameters:
    ///   - actor: The actor `transform` is isolated to.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    ///   - transform: Returns the future to wait for; its first parameter is `actor`, isolated.
    /// - Returns: A future of the result of the future `transform` returns.
    public func flatMap<A: Actor, U: Sendable>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (isolated A, Value) throws -> Future<U>
    ) -> Future<U> {
        deriveAsync(at: .pool, cancellationToken: cancellationToken) { result in
            result.asyncStep { value in try await transform(actor, value).value() }
        }
    }
}
