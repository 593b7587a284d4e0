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
    // Each input's value goes to a slot as `any Sendable` as it arrives, and `ZipValues` casts
    // the slots back into the tuple: generic over one type, as the compiler (6.3) crashes on
    // results of a pack-expansion tuple handled inside this function.
    var inputs: [any ZipInput] = []
    for future in repeat each futures { inputs.append(future) }
    let zipped = Future<(repeat each Value)>()
    let gathering = Gathering<any Sendable, (repeat each Value)>(zipped, count: inputs.count) {
        ZipValues<repeat each Value>.tuple(of: $0)
    }
    if zipped.failIfCancelled(cancellationToken) { return zipped }
    guard !inputs.isEmpty else {
        zipped.complete(with: .success(ZipValues<repeat each Value>.tuple(of: [])))  // the empty tuple
        return zipped
    }
    zipped.cancelOnRequest(of: cancellationToken)
    for index in inputs.indices {
        inputs[index].gather(intoErased: gathering, at: index, cancellationToken: cancellationToken)
    }
    return zipped.delivered(on: context, cancellationToken: cancellationToken)
}

/// The tuple of a `zip` made from its values, held as `any Sendable` in argument order.
struct ZipValues<each Value: Sendable> {
    static func tuple(of values: [any Sendable]) -> (repeat each Value) {
        var index = 0
        return (repeat next((each Value).self, of: values, at: &index))
    }

    /// The value at `index`, cast back to its type; moves `index` on.
    private static func next<T>(_: T.Type, of values: [any Sendable], at index: inout Int) -> T {
        defer { index += 1 }
        return values[index] as! T  // the value of the input at `index`, whose type is `T`
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
