// The continuations and combinators on `.mainActor`: each takes a `@MainActor` closure and
// forwards to its `on: some ExecutionContext` form on the main queue. The main queue runs its work
// on the main actor's executor, which `MainActor.assumeIsolated` checks (cheaply) and states to
// the compiler, so users never need to write it.

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
