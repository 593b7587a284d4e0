// Operators that end a stream in a future with what it accumulated: `collect`, `reduce`, `last`
// (`contains` and `allSatisfy`, decided early, are in FutureStream+Contains.swift; `first` in
// FutureStream+First.swift; the path they share, `fold`, in Internal/FutureStream+Fold.swift).
// Each gives what a `for try await` loop over `values` would compute: the first error of the
// stream fails the future, as it ends such a loop.

extension FutureStream {
    /// A future of every value of the stream, in order, once it has finished.
    ///
    /// ```swift
    /// let lines = StreamPromise<String>()
    /// let all: Future<[String]> = lines.stream.collect()
    /// lines.fulfill("a")
    /// lines.finish()  // completes `all` with ["a"]
    /// ```
    ///
    /// ```
    /// source:  1  2  3  |
    /// future:           [1, 2, 3]
    /// ```
    ///
    /// ### Semantics (`collect`, `reduce`, `last`, `contains`, `allSatisfy`)
    /// - It sees what any subscriber sees: the results the stream keeps (its ``capacity``), then
    ///   each new one. It completes when the stream finishes (`contains` and `allSatisfy` as soon
    ///   as the answer is known).
    /// - The stream's first error fails the future with it, as it ends a `for try await` loop
    ///   over ``values``; so does an error thrown by the closure.
    /// - `cancellationToken` cancelled first fails it with `CancellationError` at once.
    /// - Once the future is decided it unsubscribes: the stream keeps nothing of it, and the
    ///   token keeps no handler.
    ///
    /// - Parameter cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    /// - Returns: A future of the values.
    public func collect(cancellationToken: CancellationToken = .none) -> Future<[Value]> {
        fold(on: .synchronous, cancellationToken: cancellationToken, into: [Value]()) { values, value in
            values.append(value)
            return nil
        } atEnd: { values in
            .success(values)
        }
    }

    /// A future of the stream's values combined with `nextPartialResult`, once it has finished.
    ///
    /// ```swift
    /// let sizes = StreamPromise<Int>()
    /// let total: Future<Int> = sizes.stream.reduce(0) { $0 + $1 }
    /// ```
    ///
    /// ```
    /// source:  1  2  3  |
    /// future:           6     (reduce(0, +))
    /// ```
    ///
    /// ### Semantics
    /// As `collect(cancellationToken:)`; `nextPartialResult` runs on `context`, once per value,
    /// one call at a time, in order. A stream with no value gives `initialResult`.
    ///
    /// - Parameters:
    ///   - initialResult: The value to start from.
    ///   - context: Where `nextPartialResult` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - nextPartialResult: Combines the running value and a value into the next running value.
    /// - Returns: A future of the last running value.
    public func reduce<U: Sendable>(
        _ initialResult: U,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ nextPartialResult: @escaping @Sendable (U, Value) throws -> U
    ) -> Future<U> {
        fold(on: context, cancellationToken: cancellationToken, into: initialResult) { partial, value in
            partial = try nextPartialResult(partial, value)
            return nil
        } atEnd: { partial in
            .success(partial)
        }
    }

    /// A future of the stream's values combined with `nextPartialResult`, called on the main
    /// actor, once it has finished.
    ///
    /// ```swift
    /// @MainActor final class Cart {
    ///     var tax = 2
    ///     func total(_ prices: FutureStream<Int>) -> Future<Int> {
    ///         prices.reduce(0, on: .mainActor) { $0 + $1 + self.tax }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - initialResult: The value to start from.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - nextPartialResult: Combines the running value and a value into the next running value.
    /// - Returns: A future of the last running value.
    public func reduce<U: Sendable>(
        _ initialResult: U,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ nextPartialResult: @escaping @MainActor (U, Value) throws -> U
    ) -> Future<U> {
        reduce(initialResult, on: context.queue, cancellationToken: cancellationToken) { partial, value in
            try MainActor.assumeIsolated { try nextPartialResult(partial, value) }
        }
    }

    /// A future of the stream's last value, once it has finished.
    ///
    /// ```swift
    /// let progress = StreamPromise<Int>()
    /// let final: Future<Int> = progress.stream.last()
    /// ```
    ///
    /// ```
    /// source:  1  2  3  |
    /// future:           3
    /// ```
    ///
    /// ### Semantics
    /// As `collect(cancellationToken:)`; a stream that finishes with no value fails it with
    /// ``FutureError/noSuchElement``.
    ///
    /// - Parameter cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    /// - Returns: A future of the last value.
    public func last(cancellationToken: CancellationToken = .none) -> Future<Value> {
        fold(on: .synchronous, cancellationToken: cancellationToken, into: Value?.none) { last, value in
            last = value
            return nil
        } atEnd: { last in
            last.map { .success($0) } ?? .failure(FutureError.noSuchElement)
        }
    }
}

// MARK: - Async closures, on the main actor, isolated to an actor

// As `map`'s: the closure runs in a task (on FutureLib's threads or the context's, on the main
// actor, or isolated to an actor), one call at a time and in order, each awaited before the next
// value. The token cancels the task and fails the future.

extension FutureStream {
    /// A future of the stream's values combined with async `nextPartialResult`, once it has finished.
    ///
    /// ```swift
    /// let chunks = StreamPromise<Int>()
    /// let stored: Future<Int> = chunks.stream.reduce(0) { total, size in
    ///     await Task.yield()  // writes the chunk, say
    ///     return total + size
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `reduce(_:on:cancellationToken:_:)`, except that `nextPartialResult` runs in a task, and
    /// the next value waits until it has returned for this one. A token cancelled while it runs
    /// cancels its task and fails the future with `CancellationError`.
    ///
    /// - Parameters:
    ///   - initialResult: The value to start from.
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - nextPartialResult: Combines the running value and a value into the next running value.
    /// - Returns: A future of the last running value.
    public func reduce<U: Sendable>(
        _ initialResult: U,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ nextPartialResult: @escaping @Sendable @concurrent (U, Value) async throws -> U
    ) -> Future<U> {
        reduce(initialResult, at: .on(context), cancellationToken: cancellationToken) { partial, value in
            try await nextPartialResult(partial, value)
        }
    }

    /// A future of the stream's values combined with async `nextPartialResult`, in a task on the
    /// main actor, once it has finished.
    ///
    /// ```swift
    /// @MainActor final class Totals {
    ///     var fee = 1
    ///     func charged(_ amounts: FutureStream<Int>) -> Future<Int> {
    ///         amounts.reduce(0, on: .mainActor) { total, amount in
    ///             await Task.yield()
    ///             return total + amount + self.fee
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - initialResult: The value to start from.
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - nextPartialResult: Combines the running value and a value into the next running value.
    /// - Returns: A future of the last running value.
    public func reduce<U: Sendable>(
        _ initialResult: U,
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ nextPartialResult: @escaping @MainActor (U, Value) async throws -> U
    ) -> Future<U> {
        reduce(initialResult, at: .mainActor, cancellationToken: cancellationToken) { partial, value in
            try await nextPartialResult(partial, value)
        }
    }

    /// A future of the stream's values combined with `nextPartialResult`, isolated to `actor`,
    /// once it has finished.
    ///
    /// ```swift
    /// actor Till {
    ///     var fee = 1
    ///     func charged(_ amounts: FutureStream<Int>) -> Future<Int> {
    ///         amounts.reduce(0, on: self) { till, total, amount in total + amount + till.fee }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - initialResult: The value to start from.
    ///   - actor: The actor `nextPartialResult` is isolated to.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - nextPartialResult: Combines the running value and a value into the next running value;
    ///     its first parameter is `actor`, isolated.
    /// - Returns: A future of the last running value.
    public func reduce<A: Actor, U: Sendable>(
        _ initialResult: U,
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ nextPartialResult: @escaping @Sendable (isolated A, U, Value) throws -> U
    ) -> Future<U> {
        reduce(initialResult, at: .pool, cancellationToken: cancellationToken) { partial, value in
            try await nextPartialResult(actor, partial, value)
        }
    }

    /// The async forms' one path.
    func reduce<U: Sendable>(
        _ initialResult: U,
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ nextPartialResult: @escaping @Sendable (U, Value) async throws -> U
    ) -> Future<U> {
        fold(at: placement, cancellationToken: cancellationToken, into: initialResult) { partial, value in
            (try await nextPartialResult(partial, value), nil)
        } atEnd: { partial in
            .success(partial)
        }
    }
}
