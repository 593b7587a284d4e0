extension Future {
    /// Combines this future with `others` into a future of a tuple of all their values.
    ///
    /// Any number of futures of any types:
    ///
    /// ```swift
    /// let profile: Future<(User, [Post], Settings)> = fetchUser(id).zip(fetchPosts(id), fetchSettings(id))
    /// ```
    ///
    /// ### Semantics
    /// - Succeeds when all succeed, with the values in argument order.
    /// - Fails with the first failure in time, without waiting for the others.
    /// - A cancelled token fails it with `CancellationError` at once.
    /// - It completes on `context`: `.synchronous` completes it on the thread that completes the
    ///   deciding future (or that cancels the token); a cancelled token completes it at once
    ///   whatever the context.
    ///
    /// - Parameters:
    ///   - others: The futures to combine with this one.
    ///   - context: Where the new future is completed. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    /// - Returns: A future of all the values.
    public func zip<each Other: Sendable>(
        _ others: repeat Future<each Other>,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none
    ) -> Future<(Value, repeat each Other)> {
        FutureLib.zip(self, repeat each others, on: context, cancellationToken: cancellationToken)
    }
}

/// Combines futures of any types into a future of a tuple of their values.
///
/// ```swift
/// let (user, posts) = try await zip(fetchUser(id), fetchPosts(id)).value()
/// ```
///
/// ### Semantics
/// - Succeeds when all succeed, with the values in argument order.
/// - Fails with the first failure in time, without waiting for the others.
/// - A cancelled token fails it with `CancellationError` at once.
/// - It completes on `context`: `.synchronous` completes it on the thread that completes the
///   deciding future (or that cancels the token); a cancelled token completes it at once
///   whatever the context.
///
/// - Parameters:
///   - futures: The futures to combine.
///   - context: Where the new future is completed. Defaults to ``ExecutionContext/default``.
///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
/// - Returns: A future of all the values.
public func zip<each Value: Sendable>(
    _ futures: repeat Future<each Value>,
    on context: some ExecutionContext = .default,
    cancellationToken: CancellationToken = .none
) -> Future<(repeat each Value)> {
    // The work is done by `gather(_:cancellationToken:values:)`, generic over one type: the
    // compiler (6.3) crashes on results of a pack-expansion tuple handled inside this function.
    var sources: [any CompletionSource] = []
    for future in repeat each futures { sources.append(future) }
    let all = Futures(repeat each futures)
    return gather(sources, cancellationToken: cancellationToken) { all.values() }
        .delivered(on: context, cancellationToken: cancellationToken)
}

/// The futures of a `zip`, held as one value so that closures capture no parameter pack.
struct Futures<each Value: Sendable>: Sendable {
    let futures: (repeat Future<each Value>)

    init(_ futures: repeat Future<each Value>) {
        self.futures = (repeat each futures)
    }

    /// The values in order; every future must be complete.
    func values() -> Result<(repeat each Value), any Error> {
        do {
            return .success((repeat try Self.value(of: each futures)))
        } catch {
            return .failure(error)
        }
    }

    private static func value<T>(of future: Future<T>) throws -> T {
        try future.result!.get()
    }
}

// MARK: - On the main actor

// Completed on the main actor: the context form on the main queue.

extension Future {
    /// Combines this future with `others` into a future of a tuple, completed on the main actor.
    ///
    /// ```swift
    /// let pair: Future<(Int, String)> = Future(value: 1).zip(Future(value: "a"), on: .mainActor)
    /// ```
    ///
    /// - Parameters:
    ///   - others: The futures to combine with this one.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` when cancelled first.
    /// - Returns: A future of all the values.
    public func zip<each Other: Sendable>(
        _ others: repeat Future<each Other>,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none
    ) -> Future<(Value, repeat each Other)> {
        zip(repeat each others, on: context.queue, cancellationToken: cancellationToken)
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
