// `hop(to:)`: the same result, delivered on another context (or the main actor).

extension Future {
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

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form (see Internals.md,
// "One combinator, every form").

extension Future {
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
