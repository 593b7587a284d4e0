// Operators that end a stream in a future as soon as the answer is known: `contains` and
// `allSatisfy` (their semantics are `collect`'s, in FutureStream+Reduce.swift, but for the early
// answer). Decided, they unsubscribe.

extension FutureStream {
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

// MARK: - Async closures, on the main actor, isolated to an actor

// As `map`'s: the closure runs in a task (on FutureLib's threads or the context's, on the main
// actor, or isolated to an actor), one call at a time and in order, each awaited before the next
// value. The token cancels the task and fails the future.

extension FutureStream {
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
