import FutureLibConcurrencyHelpers
// The shared path of the async-closure forms of the future combinators and continuations (on a
// context, on the main actor, isolated to an actor): each form states where its task starts and
// hands its closure to one of these.

extension Future {
    // Inlinable so that the public async `onComplete` and `onSuccess` (Future+Callbacks.swift) are
    // specialized in the caller, with the continuation and the task body they build.

    @inlinable
    func onComplete(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ f: @escaping @Sendable (Result<Value, any Error>) async -> Void
    ) {
        onComplete(on: .synchronous, cancellationToken: cancellationToken) { result in
            placement.start(cancellationToken: cancellationToken) {
                // Cancelled between the result and the task's start: the token wins, as on a context.
                await f(cancellationToken.isCancellationRequested ? .failure(cancelledFailure) : result)
            }
        }
    }

    @inlinable
    func onSuccess(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ f: @escaping @Sendable (Value) async -> Void
    ) {
        onSuccess(on: .synchronous, cancellationToken: cancellationToken) { value in
            placement.start(cancellationToken: cancellationToken) {
                if !cancellationToken.isCancellationRequested { await f(value) }
            }
        }
    }

    @inlinable
    func onFailure(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        policy: ErrorPolicy,
        _ f: @escaping @Sendable (any Error) async -> Void
    ) {
        onFailure(on: .synchronous, cancellationToken: cancellationToken, policy: policy) { error in
            placement.start(cancellationToken: cancellationToken) {
                // Cancelled between the error and the task's start: the token wins, as on a context.
                await f(cancellationToken.isCancellationRequested ? cancelledFailure : error)
            }
        }
    }
}

extension Result where Success: Sendable, Failure == any Error {
    /// `map`'s step: a failure passes on at once; a value runs `transform` in a task.
    @inlinable
    func asyncStep<U: Sendable>(_ transform: @escaping @Sendable (Success) async throws -> U) -> AsyncStep<U> {
        switch self {
        case .success(let value): .run { try await transform(value) }
        case .failure(let error): .done(.failure(error))
        }
    }

    /// `recover`'s step: a value, or an error `policy` leaves alone, passes on at once; a failure
    /// runs `transform` in a task.
    @inlinable
    func asyncRecoveryStep(
        policy: ErrorPolicy,
        _ transform: @escaping @Sendable (any Error) async throws -> Success
    ) -> AsyncStep<Success> {
        switch self {
        case .failure(let error) where policy.handles(error): .run { try await transform(error) }
        case .success, .failure: .done(self)
        }
    }
}
