// The stream continuations and combinators on `.mainActor`: each takes a `@MainActor` closure and
// forwards to its `on: some ExecutionContext` form on the main queue (see Future+MainActor.swift).

extension FutureStream {
    /// Calls `f` with each result, on the main actor, in order.
    ///
    /// ```swift
    /// @MainActor final class Feed {
    ///     var lines: [String] = []
    ///     func follow(_ stream: FutureStream<String>) {
    ///         stream.onComplete(on: .mainActor) { self.lines.append((try? $0.get()) ?? "error") }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``onComplete(on:cancellationToken:_:)-(ExecutionContext,_,_)``; `f` runs on the main actor.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the calls early.
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

    /// Calls `f` with each value, on the main actor, in order.
    ///
    /// ```swift
    /// @MainActor final class Ticker {
    ///     var last = 0
    ///     func follow(_ prices: FutureStream<Int>) { prices.onSuccess(on: .mainActor) { self.last = $0 } }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the calls early.
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

    /// Calls `f` with each error, on the main actor, in order.
    ///
    /// ```swift
    /// @MainActor final class Errors {
    ///     var count = 0
    ///     func watch(_ stream: FutureStream<Int>) { stream.onFailure(on: .mainActor) { _ in self.count += 1 } }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the calls early.
    ///   - f: The continuation.
    public func onFailure(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor (any Error) -> Void
    ) {
        onFailure(on: context.queue, cancellationToken: cancellationToken) { error in
            MainActor.assumeIsolated { f(error) }
        }
    }

    /// Calls `f` once, on the main actor, when the stream finishes.
    ///
    /// ```swift
    /// @MainActor final class Progress {
    ///     var isDone = false
    ///     func watch(_ stream: FutureStream<Int>) { stream.onFinish(on: .mainActor) { self.isDone = true } }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Removes `f` early.
    ///   - f: The continuation.
    public func onFinish(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor () -> Void
    ) {
        onFinish(on: context.queue, cancellationToken: cancellationToken) {
            MainActor.assumeIsolated { f() }
        }
    }

    /// Transforms each value with `transform`, on the main actor.
    ///
    /// ```swift
    /// let labels: FutureStream<String> = FutureStream(value: 1).map(on: .mainActor) { "\($0)" }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - transform: Turns a value into the new value.
    /// - Returns: A stream of the transformed values.
    public func map<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) throws -> U
    ) -> FutureStream<U> {
        map(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try transform(value) }
        }
    }

    /// Keeps the values that `isIncluded`, called on the main actor, accepts.
    ///
    /// ```swift
    /// let positive: FutureStream<Int> = FutureStream(value: 1).filter(on: .mainActor) { $0 > 0 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - isIncluded: The test a value must pass.
    /// - Returns: A stream of the values that pass.
    public func filter(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ isIncluded: @escaping @MainActor (Value) throws -> Bool
    ) -> FutureStream<Value> {
        filter(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try isIncluded(value) }
        }
    }

    /// Runs `sideEffect` with each result on the main actor, then passes it on.
    ///
    /// ```swift
    /// let logged: FutureStream<Int> = FutureStream(value: 1).andThen(on: .mainActor) { print($0) }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - sideEffect: Observes each result.
    /// - Returns: A stream of the same results.
    @discardableResult
    public func andThen(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ sideEffect: @escaping @MainActor (Result<Value, any Error>) -> Void
    ) -> FutureStream<Value> {
        andThen(on: context.queue, cancellationToken: cancellationToken) { result in
            MainActor.assumeIsolated { sideEffect(result) }
        }
    }

    /// Turns each error into a value with `transform`, on the main actor.
    ///
    /// ```swift
    /// let safe: FutureStream<Int> = FutureStream(error: CancellationError()).recover(on: .mainActor) { _ in 0 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - transform: Turns an error into a value, or throws the error to pass on.
    /// - Returns: A stream of the values and recovered values.
    public func recover(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (any Error) throws -> Value
    ) -> FutureStream<Value> {
        recover(on: context.queue, cancellationToken: cancellationToken) { error in
            try MainActor.assumeIsolated { try transform(error) }
        }
    }

    /// Transforms each error with `transform`, on the main actor.
    ///
    /// ```swift
    /// let wrapped: FutureStream<Int> = FutureStream(value: 1).mapError(on: .mainActor) { $0 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - transform: Turns an error into the new error.
    /// - Returns: A stream of the values and transformed errors.
    public func mapError(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (any Error) -> any Error
    ) -> FutureStream<Value> {
        mapError(on: context.queue, cancellationToken: cancellationToken) { error in
            MainActor.assumeIsolated { transform(error) }
        }
    }
}
