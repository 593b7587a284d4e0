// `.mainActor` for the helpers that start operations: `retry`, `withTimeout`, `race`, and the free
// `zip`. Each forwards to its `on: some ExecutionContext` form on the main queue, so that an
// operation written in a `@MainActor` type may read and write its state without
// `MainActor.assumeIsolated`; the library states the isolation (the main queue runs on the main
// actor's executor).

extension Future {
    /// Calls `operation` on the main actor until it succeeds, at most `maxAttempts` times.
    ///
    /// ```swift
    /// @MainActor final class FeedModel {
    ///     var attempts = 0
    ///     func reload(_ load: @escaping @Sendable (CancellationToken) -> Future<[String]>) -> Future<[String]> {
    ///         Future.retry(maxAttempts: 3, backoff: .exponential(initial: .milliseconds(200), maximum: .seconds(2)), on: .mainActor) { token in
    ///             self.attempts += 1  // main-actor state, no hop
    ///             return load(token)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``retry(maxAttempts:backoff:clock:on:cancellationToken:shouldRetry:_:)-(_,_,_,ExecutionContext,_,_,_)``; each attempt
    /// starts on the main actor.
    ///
    /// - Parameters:
    ///   - maxAttempts: How many times `operation` may be called; at least 1.
    ///   - backoff: How long to wait between attempts.
    ///   - clock: The clock that measures the waits; ``SystemClock`` by default, a ``ManualClock`` in tests.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops retrying and fails the result with `CancellationError`.
    ///   - shouldRetry: Whether a failure is worth another attempt; by default every error but
    ///     `CancellationError`.
    ///   - operation: Starts one attempt, on the main actor, with a token that the overall
    ///     `cancellationToken` cancels.
    /// - Returns: A future of the first successful attempt, or of the last failure.
    public static func retry(
        maxAttempts: Int,
        backoff: Backoff = .immediate,
        clock: some TimerClock = .system,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        shouldRetry: @escaping @Sendable (any Error) -> Bool = { !($0 is CancellationError) },
        _ operation: @escaping @MainActor (CancellationToken) -> Future<Value>
    ) -> Future<Value> {
        retry(
            maxAttempts: maxAttempts,
            backoff: backoff,
            clock: clock,
            on: context.queue,
            cancellationToken: cancellationToken,
            shouldRetry: shouldRetry
        ) { token in
            MainActor.assumeIsolated { operation(token) }
        }
    }

    /// Starts `operation` on the main actor with a token that is cancelled after `delay`, and
    /// fails with ``FutureError/timeout`` if it has not completed by then.
    ///
    /// ```swift
    /// @MainActor final class SearchModel {
    ///     var pending = 0
    ///     func search(_ query: @escaping @Sendable (CancellationToken) -> Future<[String]>) -> Future<[String]> {
    ///         Future.withTimeout(.seconds(2), on: .mainActor) { token in
    ///             self.pending += 1
    ///             return query(token)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``withTimeout(_:clock:on:cancellationToken:_:)-(_,_,ExecutionContext,_,_)``; `operation` is called on the main actor.
    ///
    /// - Parameters:
    ///   - delay: How long the operation may take.
    ///   - clock: The clock that measures `delay`; ``SystemClock`` by default, a ``ManualClock`` in tests.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the operation and fails the result with `CancellationError`.
    ///   - operation: Starts the work, on the main actor, with a token the deadline cancels.
    /// - Returns: A future of the operation's result, or failing with ``FutureError/timeout``.
    public static func withTimeout(
        _ delay: Duration,
        clock: some TimerClock = .system,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ operation: @escaping @MainActor (CancellationToken) -> Future<Value>
    ) -> Future<Value> {
        withTimeout(delay, clock: clock, on: context.queue, cancellationToken: cancellationToken) { token in
            MainActor.assumeIsolated { operation(token) }
        }
    }

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

/// Combines futures of any types into a future of a tuple, completed on the main actor.
///
/// ```swift
/// @MainActor final class ProfileModel {
///     var title = ""
///     func show(name: Future<String>, age: Future<Int>) {
///         zip(name, age, on: .mainActor).onSuccess(on: .mainActor) { name, age in self.title = "\(name), \(age)" }
///     }
/// }
/// ```
///
/// - Parameters:
///   - futures: The futures to combine.
///   - context: `.mainActor`.
///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
/// - Returns: A future of all the values, completed on the main actor.
public func zip<each Value: Sendable>(
    _ futures: repeat Future<each Value>,
    on context: MainActorExecutionContext,
    cancellationToken: CancellationToken = .none
) -> Future<(repeat each Value)> {
    zip(repeat each futures, on: context.queue, cancellationToken: cancellationToken)
}
