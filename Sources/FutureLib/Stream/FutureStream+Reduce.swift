// Operators that end a stream in a future: `collect`, `reduce`, `last`, `contains`, `allSatisfy`
// (`first` is in FutureStream+First.swift). Each gives what a `for try await` loop over `values`
// would compute: the first error of the stream fails the future, as it ends such a loop.

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

    /// A future of whether some value satisfies `predicate`: true at the first that does, false
    /// when the stream finishes without one.
    ///
    /// ```swift
    /// let readings = StreamPromise<Int>()
    /// let overheated: Future<Bool> = readings.stream.contains { $0 > 90 }
    /// ```
    ///
    /// ```
    /// source:  1  95  3  |
    /// future:     true          (contains { $0 > 90 }; unsubscribed)
    /// ```
    ///
    /// ### Semantics
    /// As `collect(cancellationToken:)`, but decided at the first match, which unsubscribes.
    ///
    /// - Parameters:
    ///   - context: Where `predicate` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - predicate: The test.
    /// - Returns: A future of whether a value passed.
    public func contains(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        where predicate: @escaping @Sendable (Value) throws -> Bool
    ) -> Future<Bool> {
        fold(on: context, cancellationToken: cancellationToken, into: ()) { _, value in
            try predicate(value) ? true : nil
        } atEnd: { _ in
            .success(false)
        }
    }

    /// A future of whether some value satisfies `predicate`, called on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Alarm {
    ///     var limit = 90
    ///     func watch(_ readings: FutureStream<Int>) -> Future<Bool> {
    ///         readings.contains(on: .mainActor) { $0 > self.limit }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - predicate: The test.
    /// - Returns: A future of whether a value passed.
    public func contains(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        where predicate: @escaping @MainActor (Value) throws -> Bool
    ) -> Future<Bool> {
        contains(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try predicate(value) }
        }
    }

    /// A future of whether every value satisfies `predicate`: false at the first that does not,
    /// true when the stream finishes without one.
    ///
    /// ```swift
    /// let readings = StreamPromise<Int>()
    /// let allValid: Future<Bool> = readings.stream.allSatisfy { $0 >= 0 }
    /// ```
    ///
    /// ```
    /// source:  1  -2  3  |
    /// future:     false         (allSatisfy { $0 >= 0 }; unsubscribed)
    /// ```
    ///
    /// ### Semantics
    /// As `collect(cancellationToken:)`, but decided at the first value that fails, which
    /// unsubscribes. A stream with no value gives true.
    ///
    /// - Parameters:
    ///   - context: Where `predicate` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - predicate: The test.
    /// - Returns: A future of whether every value passed.
    public func allSatisfy(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ predicate: @escaping @Sendable (Value) throws -> Bool
    ) -> Future<Bool> {
        fold(on: context, cancellationToken: cancellationToken, into: ()) { _, value in
            try predicate(value) ? nil : false
        } atEnd: { _ in
            .success(true)
        }
    }

    /// A future of whether every value satisfies `predicate`, called on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Checker {
    ///     var minimum = 0
    ///     func check(_ readings: FutureStream<Int>) -> Future<Bool> {
    ///         readings.allSatisfy(on: .mainActor) { $0 >= self.minimum }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - predicate: The test.
    /// - Returns: A future of whether every value passed.
    public func allSatisfy(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ predicate: @escaping @MainActor (Value) throws -> Bool
    ) -> Future<Bool> {
        allSatisfy(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try predicate(value) }
        }
    }
}

extension FutureStream where Value: Equatable {
    /// A future of whether the stream has a value equal to `element`: true at the first, false
    /// when the stream finishes without one.
    ///
    /// ```swift
    /// let codes = StreamPromise<Int>()
    /// let sawNotFound: Future<Bool> = codes.stream.contains(404)
    /// ```
    ///
    /// ### Semantics
    /// As `contains(on:cancellationToken:where:)`.
    ///
    /// - Parameters:
    ///   - element: The value to look for.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    /// - Returns: A future of whether the stream had the value.
    public func contains(_ element: Value, cancellationToken: CancellationToken = .none) -> Future<Bool> {
        contains(on: .synchronous, cancellationToken: cancellationToken) { $0 == element }
    }
}

extension FutureStream {
    /// The path of the operators that end in a future: `step` runs with each value (on
    /// `context`, one call at a time, in order) and returns the answer when it is known early;
    /// `atEnd` gives it when the stream finishes. The first error (the stream's or a throw of
    /// `step`) fails the future. Decided, it unsubscribes and releases the link to the token.
    func fold<State: Sendable, U: Sendable>(
        on context: any ExecutionContext,
        cancellationToken: CancellationToken,
        into initialState: State,
        _ step: @escaping @Sendable (inout State, Value) throws -> U?,
        atEnd: @escaping @Sendable (State) -> Result<U, any Error>
    ) -> Future<U> {
        let future = Future<U>()
        if future.failIfCancelled(cancellationToken) { return future }
        // The subscription's own request, as in `first`: cancelling it unsubscribes.
        let subscription = CancellationRequest(linkedTo: [cancellationToken])
        let state = StageBox(initialState)
        subscribe(on: context, cancellationToken: subscription.token) { event in
            guard !future.isCompleted else { return }
            let decided: Result<U, any Error>
            switch event {
            case .result(.success(let value)):
                do {
                    guard let answer = try step(&state.value, value) else { return }
                    decided = .success(answer)
                } catch {
                    decided = .failure(error)
                }
            case .result(.failure(let error)): decided = .failure(error)
            case .finished: decided = atEnd(state.value)
            case .cancelled: decided = .failure(cancelledFailure)
            }
            future.complete(with: decided)
            subscription.cancel()  // decided: unsubscribe, and release the link to the caller's token
        }
        return future
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

    /// A future of whether some value satisfies async `predicate`: true at the first that does,
    /// false when the stream finishes without one.
    ///
    /// ```swift
    /// let urls = StreamPromise<String>()
    /// let anyReachable: Future<Bool> = urls.stream.contains { url in
    ///     await Task.yield()  // probes the URL, say
    ///     return url.hasPrefix("https")
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `contains(on:cancellationToken:where:)`, except that `predicate` runs in a task, and the
    /// next value waits until it has returned for this one. A token cancelled while it runs
    /// cancels its task and fails the future with `CancellationError`.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - predicate: The test.
    /// - Returns: A future of whether a value passed.
    public func contains(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        where predicate: @escaping @Sendable @concurrent (Value) async throws -> Bool
    ) -> Future<Bool> {
        contains(at: .on(context), cancellationToken: cancellationToken) { value in try await predicate(value) }
    }

    /// A future of whether some value satisfies async `predicate`, in a task on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Siren {
    ///     var limit = 90
    ///     func watch(_ readings: FutureStream<Int>) -> Future<Bool> {
    ///         readings.contains(on: .mainActor) { reading in
    ///             await Task.yield()
    ///             return reading > self.limit
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - predicate: The test.
    /// - Returns: A future of whether a value passed.
    public func contains(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        where predicate: @escaping @MainActor (Value) async throws -> Bool
    ) -> Future<Bool> {
        contains(at: .mainActor, cancellationToken: cancellationToken) { value in try await predicate(value) }
    }

    /// A future of whether some value satisfies `predicate`, isolated to `actor`.
    ///
    /// ```swift
    /// actor Monitor {
    ///     var limit = 90
    ///     func watch(_ readings: FutureStream<Int>) -> Future<Bool> {
    ///         readings.contains(on: self) { monitor, reading in reading > monitor.limit }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `predicate` is isolated to.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - predicate: The test; its first parameter is `actor`, isolated.
    /// - Returns: A future of whether a value passed.
    public func contains<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        where predicate: @escaping @Sendable (isolated A, Value) throws -> Bool
    ) -> Future<Bool> {
        contains(at: .pool, cancellationToken: cancellationToken) { value in try await predicate(actor, value) }
    }

    /// A future of whether every value satisfies async `predicate`: false at the first that does
    /// not, true when the stream finishes without one.
    ///
    /// ```swift
    /// let files = StreamPromise<String>()
    /// let allSigned: Future<Bool> = files.stream.allSatisfy { file in
    ///     await Task.yield()  // checks the signature, say
    ///     return file.hasSuffix(".signed")
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `allSatisfy(on:cancellationToken:_:)`, except that `predicate` runs in a task, and the
    /// next value waits until it has returned for this one. A token cancelled while it runs
    /// cancels its task and fails the future with `CancellationError`.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - predicate: The test.
    /// - Returns: A future of whether every value passed.
    public func allSatisfy(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ predicate: @escaping @Sendable @concurrent (Value) async throws -> Bool
    ) -> Future<Bool> {
        allSatisfy(at: .on(context), cancellationToken: cancellationToken) { value in try await predicate(value) }
    }

    /// A future of whether every value satisfies async `predicate`, in a task on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Inspector {
    ///     var minimum = 0
    ///     func check(_ readings: FutureStream<Int>) -> Future<Bool> {
    ///         readings.allSatisfy(on: .mainActor) { reading in
    ///             await Task.yield()
    ///             return reading >= self.minimum
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - predicate: The test.
    /// - Returns: A future of whether every value passed.
    public func allSatisfy(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ predicate: @escaping @MainActor (Value) async throws -> Bool
    ) -> Future<Bool> {
        allSatisfy(at: .mainActor, cancellationToken: cancellationToken) { value in try await predicate(value) }
    }

    /// A future of whether every value satisfies `predicate`, isolated to `actor`.
    ///
    /// ```swift
    /// actor Validator {
    ///     var minimum = 0
    ///     func check(_ readings: FutureStream<Int>) -> Future<Bool> {
    ///         readings.allSatisfy(on: self) { validator, reading in reading >= validator.minimum }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `predicate` is isolated to.
    ///   - cancellationToken: Fails the future with `CancellationError` and unsubscribes.
    ///   - predicate: The test; its first parameter is `actor`, isolated.
    /// - Returns: A future of whether every value passed.
    public func allSatisfy<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ predicate: @escaping @Sendable (isolated A, Value) throws -> Bool
    ) -> Future<Bool> {
        allSatisfy(at: .pool, cancellationToken: cancellationToken) { value in try await predicate(actor, value) }
    }

    // The async forms' paths.

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

    func contains(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ predicate: @escaping @Sendable (Value) async throws -> Bool
    ) -> Future<Bool> {
        fold(at: placement, cancellationToken: cancellationToken, into: ()) { _, value in
            ((), try await predicate(value) ? true : nil)
        } atEnd: { _ in
            .success(false)
        }
    }

    func allSatisfy(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ predicate: @escaping @Sendable (Value) async throws -> Bool
    ) -> Future<Bool> {
        fold(at: placement, cancellationToken: cancellationToken, into: ()) { _, value in
            ((), try await predicate(value) ? nil : false)
        } atEnd: { _ in
            .success(true)
        }
    }
}
