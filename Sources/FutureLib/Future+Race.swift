import Synchronization

extension Future {
    /// Starts every operation, each with a token of its own, and completes with the first result
    /// in time; then cancels the others' tokens and lets go of them.
    ///
    /// ```swift
    /// let fastest = Future.race([
    ///     { @Sendable token in fetch(from: mirrorA, cancellationToken: token) },
    ///     { @Sendable token in fetch(from: mirrorB, cancellationToken: token) },
    /// ])
    /// ```
    ///
    /// Mark each closure `@Sendable`: in an array literal, Swift infers the closures' type before it
    /// sees the element type the parameter asks for. Unlike `firstCompleted()` on futures that already run, the race owns the work it starts,
    /// so it can stop the losers.
    ///
    /// ### Semantics
    /// - The operations are called on `context`, in order; one that has not started by the time
    ///   the race is decided is never called.
    /// - The first result in time wins, success or failure. The winner's token is never cancelled.
    /// - Once decided, every loser's token is cancelled and the race's continuations are removed
    ///   from the losers' futures, so nothing of the race keeps a loser (or its timers) alive.
    /// - Cancelling `cancellationToken` fails the race with `CancellationError` at once and cancels
    ///   every operation's token.
    /// - No operations: fails with ``FutureError/noSuchElement``.
    ///
    /// - Parameters:
    ///   - context: Where the operations are called. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the race and every operation.
    ///   - operations: The competitors; each gets the token that cancels it when it loses.
    /// - Returns: A future of the first result in time.
    public static func race(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ operations: [@Sendable (CancellationToken) -> Future<Value>]
    ) -> Future<Value> {
        let result = Future<Value>()
        if result.failIfCancelled(cancellationToken) { return result }
        guard !operations.isEmpty else {
            result.complete(with: .failure(FutureError.noSuchElement))
            return result
        }
        result.cancelOnRequest(of: cancellationToken)
        let requests = operations.map { _ in CancellationRequest() }
        // Cancelled when the race is decided: removes the race's continuations from the losers.
        let decided = CancellationRequest()
        let first = FirstClaim()
        let forwarding = cancellationToken.onCancel {
            decided.cancel()
            for request in requests { request.cancel() }
        }
        for (index, operation) in operations.enumerated() {
            context.execute {
                // Decided (or cancelled) already: this competitor's token is cancelled, don't start it.
                guard !result.isCompleted, !requests[index].isCancellationRequested else { return }
                // The continuation holds `decided`, whose handler removes it: that handler holds
                // neither, so a competitor that never completes and that nobody else holds is
                // released with the race.
                let competitor = operation(requests[index].token)
                competitor.observe(
                    removedBy: decided.token,
                    .result { outcome in
                        guard first.claim() else { return }
                        forwarding.unregister()
                        // The losers first, so that whoever sees the result also sees them cancelled.
                        for (other, request) in requests.enumerated() where other != index { request.cancel() }
                        decided.cancel()
                        result.complete(with: outcome)
                    }
                )
            }
        }
        return result
    }
}

/// Lets exactly one caller through: the first to ``claim()``.
final class FirstClaim: Sendable {
    private let claimed = Atomic<Bool>(false)

    /// True for the first call only.
    func claim() -> Bool {
        // Acquiring and releasing: the winner's effects are ordered before those of later callers.
        claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form (see Internals.md,
// "One combinator, every form").

extension Future {
    /// Starts every operation on the main actor and completes with the first result; the others'
    /// tokens are cancelled.
    ///
    /// ```swift
    /// @MainActor final class MirrorModel {
    ///     var tried: [String] = []
    ///     func fastest(_ fetch: @escaping @Sendable (String, CancellationToken) -> Future<Int>) -> Future<Int> {
    ///         Future.race(on: .mainActor, [
    ///             { @MainActor token in self.tried.append("a"); return fetch("a", token) },
    ///             { @MainActor token in self.tried.append("b"); return fetch("b", token) },
    ///         ])
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``race(on:cancellationToken:_:)-(ExecutionContext,_,_)``; each operation is called on the main actor.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels every operation and fails the result with `CancellationError`.
    ///   - operations: The competitors, each given a token that is cancelled once the race is decided.
    /// - Returns: A future of the first result in time, or ``FutureError/noSuchElement`` for no operations.
    public static func race(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ operations: [@MainActor (CancellationToken) -> Future<Value>]
    ) -> Future<Value> {
        let started: [@Sendable (CancellationToken) -> Future<Value>] = operations.map { operation in
            { token in MainActor.assumeIsolated { operation(token) } }
        }
        return race(on: context.queue, cancellationToken: cancellationToken, started)
    }
}
