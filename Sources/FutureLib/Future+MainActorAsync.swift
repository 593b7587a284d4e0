// Async closures on `.mainActor`: each runs in a task on the main actor, which the token cancels.
// A closure with no `await` picks the synchronous form in Future+MainActor.swift.

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
}
