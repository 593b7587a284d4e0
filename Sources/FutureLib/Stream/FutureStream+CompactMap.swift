// `compactMap` and `compacted`: values that become nil are left out.

extension FutureStream {
    /// Transforms every value with `transform` and leaves out the ones it turns into nil.
    ///
    /// Errors pass through without calling `transform`; if `transform` throws, the new stream
    /// gets that error in place of the value (and goes on), as with `map`.
    ///
    /// ```swift
    /// let lines = StreamPromise<String>()
    /// let numbers: FutureStream<Int> = lines.stream.compactMap { Int($0) }  // "x" is left out
    /// ```
    ///
    /// ```
    /// source:  "1"  "x"  "3"  |
    /// output:   1         3   |
    /// ```
    ///
    /// ### Semantics
    /// As `map(on:cancellationToken:_:)`: `transform` runs on `context` once per value, one call
    /// at a time, in order; the new stream finishes when this one does; a cancelled token gives
    /// it one `CancellationError` and the end, and unsubscribes it.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Turns a value into the new value, or nil to leave it out.
    /// - Returns: A stream of the non-nil transformed values, and of the errors.
    @inlinable
    public func compactMap<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Value) throws -> U?
    ) -> FutureStream<U> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            switch result {
            case .success(let value):
                do {
                    if let transformed = try transform(value) { derived.publish(.success(transformed)) }
                } catch {
                    derived.publish(.failure(error))
                }
            case .failure(let error):
                derived.publish(.failure(error))
            }
        }
    }

    /// Transforms every value with `transform`, called on the main actor, and leaves out nils.
    ///
    /// ```swift
    /// @MainActor final class Form {
    ///     var base = 10
    ///     func parsed(_ lines: FutureStream<String>) -> FutureStream<Int> {
    ///         lines.compactMap(on: .mainActor) { Int($0, radix: self.base) }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Turns a value into the new value, or nil to leave it out.
    /// - Returns: A stream of the non-nil transformed values, and of the errors.
    public func compactMap<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) throws -> U?
    ) -> FutureStream<U> {
        compactMap(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try transform(value) }
        }
    }

    /// Leaves out the nil values of a stream of optionals.
    ///
    /// ```swift
    /// let lookups = StreamPromise<Int?>()
    /// let found: FutureStream<Int> = lookups.stream.compacted()
    /// ```
    ///
    /// ```
    /// source:  1  nil  3  |
    /// output:  1       3  |
    /// ```
    ///
    /// Errors pass through. No closure runs, so there is no `on:`.
    ///
    /// - Parameter cancellationToken: Cancels and finishes the new stream.
    /// - Returns: A stream of the non-nil values, and of the errors.
    @inlinable
    public func compacted<Wrapped: Sendable>(
        cancellationToken: CancellationToken = .none
    ) -> FutureStream<Wrapped> where Value == Wrapped? {
        derive(on: .synchronous, cancellationToken: cancellationToken) { result, derived in
            switch result {
            case .success(let value?): derived.publish(.success(value))
            case .success(nil): break
            case .failure(let error): derived.publish(.failure(error))
            }
        }
    }
}

// MARK: - Async closures, on the main actor, isolated to an actor

// As `map`'s: `transform` runs in a task (on FutureLib's threads or the context's, on the main
// actor, or isolated to an actor), one call at a time and in order: the next value waits until
// `transform` returned for this one. The token cancels the task.

extension FutureStream {
    /// Transforms every value with async `transform`, one call at a time, in order, and leaves out
    /// the ones it turns into nil.
    ///
    /// ```swift
    /// let names = StreamPromise<String>()
    /// let known: FutureStream<Int> = names.stream.compactMap { name in
    ///     await Task.yield()  // a lookup that may find nothing
    ///     return name.isEmpty ? nil : name.count
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `compactMap(on:cancellationToken:_:)`, except that `transform` runs in a task, and the
    /// next value waits until it has returned for this one. A token cancelled while it runs
    /// cancels its task; the new stream gets `CancellationError` and finishes at once.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - transform: Turns a value into the new value, or nil to leave it out.
    /// - Returns: A stream of the non-nil transformed values, and of the errors.
    public func compactMap<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable @concurrent (Value) async throws -> U?
    ) -> FutureStream<U> {
        compactMap(at: .on(context), cancellationToken: cancellationToken) { value in try await transform(value) }
    }

    /// Transforms every value with async `transform`, in a task on the main actor, one call at a
    /// time, in order, and leaves out nils.
    ///
    /// ```swift
    /// @MainActor final class Picker {
    ///     var names = [1: "one"]
    ///     func labels(_ ids: FutureStream<Int>) -> FutureStream<String> {
    ///         ids.compactMap(on: .mainActor) { id in
    ///             await Task.yield()
    ///             return self.names[id]
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - transform: Turns a value into the new value, or nil to leave it out.
    /// - Returns: A stream of the non-nil transformed values, and of the errors.
    public func compactMap<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) async throws -> U?
    ) -> FutureStream<U> {
        compactMap(at: .mainActor, cancellationToken: cancellationToken) { value in try await transform(value) }
    }

    /// Transforms every value with `transform`, isolated to `actor`, one call at a time, in
    /// order, and leaves out nils.
    ///
    /// ```swift
    /// actor Directory {
    ///     var names = [1: "one"]
    ///     func labels(_ ids: FutureStream<Int>) -> FutureStream<String> {
    ///         ids.compactMap(on: self) { directory, id in directory.names[id] }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `transform` is isolated to.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Turns a value into the new value, or nil to leave it out; its first
    ///     parameter is `actor`, isolated.
    /// - Returns: A stream of the non-nil transformed values, and of the errors.
    public func compactMap<A: Actor, U: Sendable>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (isolated A, Value) throws -> U?
    ) -> FutureStream<U> {
        compactMap(at: .pool, cancellationToken: cancellationToken) { value in try await transform(actor, value) }
    }

    /// The async forms' one path.
    func compactMap<U: Sendable>(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ transform: @escaping @Sendable (Value) async throws -> U?
    ) -> FutureStream<U> {
        deriveAsync(at: placement, cancellationToken: cancellationToken) { result -> Result<U, any Error>? in
            switch result {
            case .success(let value):
                do {
                    return try await transform(value).map { .success($0) }
                } catch {
                    return .failure(error)
                }
            case .failure(let error):
                return .failure(error)
            }
        }
    }
}
