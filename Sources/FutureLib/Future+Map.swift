// `map` and `flatMap`: a new future from the value, in every form (`filter`, `transform`,
// `mapError` and `andThen` are in Future+Transform.swift, `hop(to:)` in Future+Hop.swift).

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
