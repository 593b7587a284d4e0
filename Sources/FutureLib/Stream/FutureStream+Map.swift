extension FutureStream {
    /// Transforms every value with `transform`.
    ///
    /// Errors pass through without calling `transform`; if `transform` throws, the new stream
    /// gets that error in place of the value (and goes on).
    ///
    /// ```swift
    /// let headings: FutureStream<Double> = compass.map { $0.magneticHeading }
    /// ```
    ///
    /// ### Semantics (every stream combinator)
    /// - The new stream has this stream's ``capacity``, gets the results this stream keeps at
    ///   once (as any late subscriber), and finishes when this stream finishes (`flatMap` and
    ///   `recoverWith`: and every future or stream their closure started has completed or finished).
    /// - `transform` runs on `context` once per result, one call at a time, in order, so the new
    ///   stream keeps the order of this one even on a concurrent context.
    /// - When `cancellationToken` is cancelled, the new stream gets `CancellationError` and finishes
    ///   at once, `transform` is not called again, and this stream is unsubscribed. A token that is
    ///   already cancelled gives a stream that holds just that error and has finished.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Turns a value into the new value.
    /// - Returns: A stream of the transformed values.
    @inlinable
    public func map<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Value) throws -> U
    ) -> FutureStream<U> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            derived.publish(Result { try transform(result.get()) })
        }
    }

    /// Continues every value with the future `transform` returns, and streams their results.
    ///
    /// The results arrive in the order the futures complete, which need not be the order of the
    /// values. Errors pass through without calling `transform`. The new stream finishes when this
    /// one has finished and every future has completed.
    ///
    /// ```swift
    /// let names: FutureStream<String> = userIDs.flatMap { id in fetchUser(id).map { $0.name } }
    /// ```
    ///
    /// ### Cancellation
    /// As `map(on:cancellationToken:_:)`; a cancelled token also stops waiting for the futures
    /// (they themselves are not cancelled: give them the token too).
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Starts the next step for a value.
    /// - Returns: A stream of the futures' results.
    public func flatMap<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Value) throws -> Future<U>
    ) -> FutureStream<U> {
        deriveAwaiting(on: context, cancellationToken: cancellationToken) { result in
            do {
                return .later(try transform(result.get()))
            } catch {
                return .now(.failure(error))
            }
        }
    }

    /// Continues every value with the stream `transform` returns, and merges all their results.
    ///
    /// Results of the inner streams arrive as they come (each inner stream in its own order,
    /// starting with the results it keeps). Errors of this stream pass through. The new stream
    /// finishes when this one and every inner stream have finished.
    ///
    /// ```swift
    /// let readings: FutureStream<Reading> = connectedDevices.flatMap { device in device.readings }
    /// ```
    ///
    /// ### Cancellation
    /// As `map(on:cancellationToken:_:)`; a cancelled token also unsubscribes from the inner
    /// streams.
    ///
    /// - Parameters:
    ///   - context: Where `transform` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Returns the stream for a value.
    /// - Returns: A stream of the inner streams' results.
    public func flatMap<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (Value) throws -> FutureStream<U>
    ) -> FutureStream<U> {
        deriveMerging(on: context, cancellationToken: cancellationToken) { result in
            do {
                return .merge(try transform(result.get()))
            } catch {
                return .now(.failure(error))
            }
        }
    }

    /// Keeps the values that satisfy `isIncluded` and skips the others.
    ///
    /// Unlike `Future.filter`, which fails with ``FutureError/noSuchElement``, a stream simply
    /// leaves such values out. Errors pass through; if `isIncluded` throws, the new stream gets
    /// that error in place of the value.
    ///
    /// ```swift
    /// let strongSignals = rssiReadings.filter { $0 > -70 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where `isIncluded` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - isIncluded: The test a value must pass.
    /// - Returns: A stream of the values that passed, and of the errors.
    @inlinable
    public func filter(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ isIncluded: @escaping @Sendable (Value) throws -> Bool
    ) -> FutureStream<Value> {
        derive(on: context, cancellationToken: cancellationToken) { result, derived in
            guard case .success(let value) = result else {
                derived.publish(result)
                return
            }
            do {
                if try isIncluded(value) { derived.publish(result) }
            } catch {
                derived.publish(.failure(error))
            }
        }
    }

    /// Runs `sideEffect` with every result, then passes the result on unchanged.
    ///
    /// ```swift
    /// let logged = readings.andThen { result in logger.debug("reading: \(result)") }
    /// ```
    ///
    /// The new stream gets each result after `sideEffect` returned for it.
    ///
    /// - Parameters:
    ///   - context: Where `sideEffect` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - sideEffect: Called with each result.
    /// - Returns: A stream of the same results.
    @inlinable @discardableResult
    public func andThen(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ sideEffect: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) -> FutureStream<Value> {
        derive(on: context, cancellationToken: cancellationToken, keepsSubscription: true) { result, derived in
            sideEffect(result)
            derived.publish(result)
        }
    }
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form.

extension FutureStream {
    /// Transforms each value with `transform`, on the main actor.
    ///
    /// ```swift
    /// let labels: FutureStream<String> = FutureStream(value: 1).map(on: .mainActor) { "\($0)" }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - transform: Turns a value into the new value.
    /// - Returns: A stream of the transformed values.
    public func map<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) throws -> U
    ) -> FutureStream<U> {
        map(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try transform(value) }
        }
    }

    /// Keeps the values that `isIncluded`, called on the main actor, accepts.
    ///
    /// ```swift
    /// let positive: FutureStream<Int> = FutureStream(value: 1).filter(on: .mainActor) { $0 > 0 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - isIncluded: The test a value must pass.
    /// - Returns: A stream of the values that pass.
    public func filter(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ isIncluded: @escaping @MainActor (Value) throws -> Bool
    ) -> FutureStream<Value> {
        filter(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try isIncluded(value) }
        }
    }

    /// Runs `sideEffect` with each result on the main actor, then passes it on.
    ///
    /// ```swift
    /// let logged: FutureStream<Int> = FutureStream(value: 1).andThen(on: .mainActor) { print($0) }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - sideEffect: Observes each result.
    /// - Returns: A stream of the same results.
    @discardableResult
    public func andThen(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ sideEffect: @escaping @MainActor (Result<Value, any Error>) -> Void
    ) -> FutureStream<Value> {
        andThen(on: context.queue, cancellationToken: cancellationToken) { result in
            MainActor.assumeIsolated { sideEffect(result) }
        }
    }

    /// Continues every value with the future `transform`, called on the main actor, returns.
    ///
    /// ```swift
    /// @MainActor final class Lookup {
    ///     var prefix = "user "
    ///     func names(_ ids: FutureStream<Int>) -> FutureStream<String> {
    ///         ids.flatMap(on: .mainActor) { id in Future(value: self.prefix + "\(id)") }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - transform: Starts the next step for a value.
    /// - Returns: A stream of the futures' results.
    public func flatMap<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) throws -> Future<U>
    ) -> FutureStream<U> {
        flatMap(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try transform(value) }
        }
    }

    /// Continues every value with the stream `transform`, called on the main actor, returns.
    ///
    /// ```swift
    /// let merged: FutureStream<Int> = FutureStream(value: 1).flatMap(on: .mainActor) { value -> FutureStream<Int> in
    ///     FutureStream(value: value * 10)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the new stream early.
    ///   - transform: Returns the stream for a value.
    /// - Returns: A stream of the inner streams' results.
    public func flatMap<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) throws -> FutureStream<U>
    ) -> FutureStream<U> {
        flatMap(on: context.queue, cancellationToken: cancellationToken) { value in
            try MainActor.assumeIsolated { try transform(value) }
        }
    }
}

// MARK: - Async closures

// `transform` runs in a task on FutureLib's threads (or the context's), one call at a time and in
// order: the next value waits until `transform` returned for this one. The token cancels the task.

extension FutureStream {
    /// Transforms every value with async `transform`, one call at a time, in order.
    ///
    /// ```swift
    /// let labels: FutureStream<String> = FutureStream(value: 7).map { id in
    ///     try await Task.sleep(for: .milliseconds(1))
    ///     return "user \(id)"
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `map(on:cancellationToken:_:)`, except that `transform` runs in a task,
    /// and the next value waits until it has returned for this one. A token cancelled while it runs
    /// cancels its task; the new stream gets `CancellationError` and finishes at once.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - transform: Turns a value into the new value.
    /// - Returns: A stream of the transformed values.
    public func map<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable @concurrent (Value) async throws -> U
    ) -> FutureStream<U> {
        map(at: .on(context), cancellationToken: cancellationToken) { value in try await transform(value) }
    }

    /// Keeps the values that async `isIncluded` accepts, one call at a time, in order.
    ///
    /// ```swift
    /// let paths = StreamPromise<String>()
    /// let readable = paths.stream.filter { path in
    ///     await Task.yield()  // asks the file system, say
    ///     return !path.isEmpty
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `filter(on:cancellationToken:_:)`, except that `isIncluded` runs in a task, and the next
    /// value waits until it has returned for this one. A token cancelled while it runs cancels
    /// its task; the new stream gets `CancellationError` and finishes at once.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - isIncluded: The test a value must pass.
    /// - Returns: A stream of the values that passed, and of the errors.
    public func filter(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ isIncluded: @escaping @Sendable @concurrent (Value) async throws -> Bool
    ) -> FutureStream<Value> {
        filter(at: .on(context), cancellationToken: cancellationToken) { value in try await isIncluded(value) }
    }

    /// The async forms' one path of `filter`.
    func filter(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ isIncluded: @escaping @Sendable (Value) async throws -> Bool
    ) -> FutureStream<Value> {
        deriveAsync(at: placement, cancellationToken: cancellationToken) { result -> Result<Value, any Error>? in
            guard case .success(let value) = result else { return result }
            do {
                return try await isIncluded(value) ? result : nil
            } catch {
                return .failure(error)
            }
        }
    }
}

// MARK: - Async closures on the main actor

extension FutureStream {
    /// Transforms every value with async `transform`, in a task on the main actor, one call at a time, in order.
    ///
    /// ```swift
    /// let labels: FutureStream<String> = FutureStream(value: 7).map(on: .mainActor) { id in
    ///     await Task.yield()
    ///     return "user \(id)"
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - transform: Turns a value into the new value.
    /// - Returns: A stream of the transformed values.
    public func map<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @MainActor (Value) async throws -> U
    ) -> FutureStream<U> {
        map(at: .mainActor, cancellationToken: cancellationToken) { value in try await transform(value) }
    }

    /// Keeps the values that async `isIncluded`, in a task on the main actor, accepts.
    ///
    /// ```swift
    /// @MainActor final class Inbox {
    ///     var blocked: Set<String> = ["spam"]
    ///     func visible(_ senders: FutureStream<String>) -> FutureStream<String> {
    ///         senders.filter(on: .mainActor) { sender in
    ///             await Task.yield()
    ///             return !self.blocked.contains(sender)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the task and finishes the new stream.
    ///   - isIncluded: The test a value must pass.
    /// - Returns: A stream of the values that passed, and of the errors.
    public func filter(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ isIncluded: @escaping @MainActor (Value) async throws -> Bool
    ) -> FutureStream<Value> {
        filter(at: .mainActor, cancellationToken: cancellationToken) { value in try await isIncluded(value) }
    }
}

// MARK: - Isolated to an actor

extension FutureStream {
    /// Transforms every value with `transform`, isolated to `actor`, one call at a time, in order.
    ///
    /// ```swift
    /// actor Prices {
    ///     var rate = 2
    ///     func converted(_ amounts: FutureStream<Int>) -> FutureStream<Int> {
    ///         amounts.map(on: self) { prices, amount in amount * prices.rate }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `transform` is isolated to.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - transform: Turns a value into the new value; its first parameter is `actor`, isolated.
    /// - Returns: A stream of the transformed values.
    public func map<A: Actor, U: Sendable>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ transform: @escaping @Sendable (isolated A, Value) throws -> U
    ) -> FutureStream<U> {
        map(at: .pool, cancellationToken: cancellationToken) { value in try await transform(actor, value) }
    }

    /// Keeps the values that `isIncluded`, isolated to `actor`, accepts, one call at a time, in order.
    ///
    /// ```swift
    /// actor Blocklist {
    ///     var blocked: Set<String> = ["spam"]
    ///     func visible(_ senders: FutureStream<String>) -> FutureStream<String> {
    ///         senders.filter(on: self) { list, sender in !list.blocked.contains(sender) }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `isIncluded` is isolated to.
    ///   - cancellationToken: Cancels and finishes the new stream.
    ///   - isIncluded: The test a value must pass; its first parameter is `actor`, isolated.
    /// - Returns: A stream of the values that passed, and of the errors.
    public func filter<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ isIncluded: @escaping @Sendable (isolated A, Value) throws -> Bool
    ) -> FutureStream<Value> {
        filter(at: .pool, cancellationToken: cancellationToken) { value in try await isIncluded(actor, value) }
    }
}
