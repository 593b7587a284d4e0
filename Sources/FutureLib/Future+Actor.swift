// Continuations isolated to an actor: an actor's own methods register them with `on: self`, and
// each receives the actor as an `isolated` parameter, so it reads and writes the actor's state
// synchronously, with no `Task { await self.… }` hop written by hand.

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
    /// failure, including `CancellationError` when `cancellationToken` is cancelled first.
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
        onComplete(at: .pool, cancellationToken: cancellationToken) { result in
            guard case .failure(let error) = result else { return }
            if policy.handles(error) || cancellationToken.isCancellationRequested { await f(actor, error) }
        }
    }

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
