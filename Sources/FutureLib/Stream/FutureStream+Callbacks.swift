extension FutureStream {
    /// Calls `f` with every result of the stream: the kept ones first, then each new one.
    ///
    /// ```swift
    /// let stop = CancellationRequest()
    /// locations.onComplete(on: DispatchQueue.main, cancellationToken: stop.token) { result in
    ///     switch result {
    ///     case .success(let location): map.center = location
    ///     case .failure(let error): report(error)
    ///     }
    /// }
    /// stop.cancel()  // unsubscribes; `f` gets one `CancellationError` and is released
    /// ```
    ///
    /// ### Semantics
    /// - `f` gets each result exactly once, in the stream's order, on `context`, one call at a
    ///   time (also on a concurrent context). Results kept by the stream (its ``capacity``) come
    ///   first; see ``FutureStream`` for the policy.
    /// - When the stream finishes, `f` gets the results still on their way, then is released.
    /// - When `cancellationToken` is cancelled, `f` is unsubscribed at once: results not yet
    ///   delivered are dropped, `f` is called once more with `CancellationError`, then released.
    ///   A token that is already cancelled gives just that one call. The stream and its other
    ///   subscribers are unaffected.
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f`; it then gets `CancellationError`.
    ///   - f: The handler.
    @inlinable
    public func onComplete(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        subscribe(on: context, cancellationToken: cancellationToken) { event in
            switch event {
            case .result(let result): f(result)
            case .cancelled: f(.failure(cancelledFailure))
            case .finished: break
            }
        }
    }

    /// Calls `f` with every value of the stream (errors are skipped).
    ///
    /// ```swift
    /// accelerations.onSuccess(on: DispatchQueue.main) { acceleration in
    ///     needle.angle = acceleration.x
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `onComplete(on:cancellationToken:_:)`, except that `f` gets only the values: never an
    /// error, and nothing when `cancellationToken` is cancelled (it is just unsubscribed and released).
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f`.
    ///   - f: The handler.
    @inlinable
    public func onSuccess(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (Value) -> Void
    ) {
        subscribe(on: context, cancellationToken: cancellationToken) { event in
            if case .result(.success(let value)) = event { f(value) }
        }
    }

    /// Calls `f` with every error of the stream (values are skipped).
    ///
    /// ```swift
    /// accelerations.onFailure { error in logger.warning("sensor: \(error)") }
    /// ```
    ///
    /// ### Semantics
    /// As `onComplete(on:cancellationToken:_:)`, except that `f` gets only the errors, including
    /// one `CancellationError` when `cancellationToken` is cancelled.
    ///
    /// ### Cancellation is not a failure to report, by default
    /// As for `Future.onFailure`: a `CancellationError` the stream carries (its producer or a
    /// combinator's token was cancelled) does not reach `f` unless `policy` is
    /// ``ErrorPolicy/allErrors``. The handler's own token is different: when it fires, `f` gets one
    /// `CancellationError`, whatever the policy.
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f`; it then gets `CancellationError`.
    ///   - policy: Which errors of the stream reach `f`: by default every error but
    ///     `CancellationError` (the token's own `CancellationError` always does). See ``ErrorPolicy``.
    ///   - f: The handler.
    @inlinable
    public func onFailure(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ f: @escaping @Sendable (any Error) -> Void
    ) {
        subscribe(on: context, cancellationToken: cancellationToken) { event in
            switch event {
            case .result(.failure(let error)) where policy.handles(error): f(error)
            case .cancelled: f(cancelledFailure)
            case .result, .finished: break
            }
        }
    }

    /// Calls `f` once when the stream finishes (at once, on `context`, if it has finished already).
    ///
    /// ```swift
    /// downloads.onFinish(on: DispatchQueue.main) { spinner.stopAnimating() }
    /// ```
    ///
    /// ### Semantics
    /// - `f` runs exactly once, on `context`, after the stream finished. Handlers registered
    ///   earlier on the same serial context have then had all their results.
    /// - When `cancellationToken` is cancelled first, `f` is never called and is released.
    ///
    /// - Parameters:
    ///   - context: Where `f` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f`.
    ///   - f: The handler.
    @inlinable
    public func onFinish(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable () -> Void
    ) {
        subscribe(on: context, cancellationToken: cancellationToken, wantsResults: false) { event in
            if case .finished = event { f() }
        }
    }
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form.

extension FutureStream {
    /// Calls `f` with each result, on the main actor, in order.
    ///
    /// ```swift
    /// @MainActor final class Feed {
    ///     var lines: [String] = []
    ///     func follow(_ stream: FutureStream<String>) {
    ///         stream.onComplete(on: .mainActor) { self.lines.append((try? $0.get()) ?? "error") }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `onComplete(on:cancellationToken:_:)`; `f` runs on the main actor.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the calls early.
    ///   - f: The continuation.
    public func onComplete(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor (Result<Value, any Error>) -> Void
    ) {
        onComplete(on: context.queue, cancellationToken: cancellationToken) { result in
            MainActor.assumeIsolated { f(result) }
        }
    }

    /// Calls `f` with each value, on the main actor, in order.
    ///
    /// ```swift
    /// @MainActor final class Ticker {
    ///     var last = 0
    ///     func follow(_ prices: FutureStream<Int>) { prices.onSuccess(on: .mainActor) { self.last = $0 } }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the calls early.
    ///   - f: The continuation.
    public func onSuccess(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor (Value) -> Void
    ) {
        onSuccess(on: context.queue, cancellationToken: cancellationToken) { value in
            MainActor.assumeIsolated { f(value) }
        }
    }

    /// Calls `f` with each error, on the main actor, in order.
    ///
    /// ```swift
    /// @MainActor final class Errors {
    ///     var count = 0
    ///     func watch(_ stream: FutureStream<Int>) { stream.onFailure(on: .mainActor) { _ in self.count += 1 } }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Stops the calls early; `f` then gets `CancellationError`.
    ///   - policy: Which errors of the stream reach `f`: by default every error but
    ///     `CancellationError` (the token's own `CancellationError` always does). See ``ErrorPolicy``.
    ///   - f: The continuation.
    public func onFailure(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ f: @escaping @MainActor (any Error) -> Void
    ) {
        onFailure(on: context.queue, cancellationToken: cancellationToken, policy: policy) { error in
            MainActor.assumeIsolated { f(error) }
        }
    }

    /// Calls `f` once, on the main actor, when the stream finishes.
    ///
    /// ```swift
    /// @MainActor final class Progress {
    ///     var isDone = false
    ///     func watch(_ stream: FutureStream<Int>) { stream.onFinish(on: .mainActor) { self.isDone = true } }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Removes `f` early.
    ///   - f: The continuation.
    public func onFinish(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor () -> Void
    ) {
        onFinish(on: context.queue, cancellationToken: cancellationToken) {
            MainActor.assumeIsolated { f() }
        }
    }
}

// MARK: - Async closures

// Each call runs in a task on FutureLib's threads (or the context's), one at a time and in order:
// the next result waits until `f` returned for this one. The token cancels the running task.

extension FutureStream {
    /// Calls async `f` with every result of the stream, one call at a time, in order.
    ///
    /// ```swift
    /// let stream = FutureStream(value: 3)
    /// stream.onComplete { result in
    ///     try? await Task.sleep(for: .milliseconds(1))
    ///     print(result)
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As `onComplete(on:cancellationToken:_:)`, except that `f` runs in a
    /// task, and the next result waits until `f` has returned for this one. A token cancelled while
    /// `f` runs cancels its task, drops the results not delivered yet, and `f` then gets one
    /// `CancellationError`.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f` (it then gets `CancellationError`), or cancels its task.
    ///   - f: The handler.
    public func onComplete(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable @concurrent (Result<Value, any Error>) async -> Void
    ) {
        onComplete(at: .on(context), cancellationToken: cancellationToken) { result in await f(result) }
    }

    /// Calls async `f` with every value of the stream, one call at a time, in order.
    ///
    /// ```swift
    /// FutureStream(value: 3).onSuccess { value in
    ///     try? await Task.sleep(for: .milliseconds(1))
    ///     print(value)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f`, or cancels its task.
    ///   - f: The handler.
    public func onSuccess(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable @concurrent (Value) async -> Void
    ) {
        onSuccess(at: .on(context), cancellationToken: cancellationToken) { value in await f(value) }
    }

    /// Calls async `f` with every error of the stream, one call at a time, in order.
    ///
    /// ```swift
    /// FutureStream<Int>(error: FutureError.timeout).onFailure { error in
    ///     try? await Task.sleep(for: .milliseconds(1))
    ///     print(error)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f` (it then gets `CancellationError`), or cancels its task.
    ///   - policy: Which errors of the stream reach `f`: by default every error but
    ///     `CancellationError` (the token's own `CancellationError` always does). See ``ErrorPolicy``.
    ///   - f: The handler.
    public func onFailure(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ f: @escaping @Sendable @concurrent (any Error) async -> Void
    ) {
        onFailure(at: .on(context), cancellationToken: cancellationToken, policy: policy) { error in await f(error) }
    }

    /// Calls async `f` once, in a task, when the stream finishes.
    ///
    /// ```swift
    /// FutureStream(value: 3).onFinish {
    ///     try? await Task.sleep(for: .milliseconds(1))
    ///     print("done")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: Where the task's jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Unsubscribes `f`.
    ///   - f: The handler.
    public func onFinish(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable @concurrent () async -> Void
    ) {
        onFinish(at: .on(context), cancellationToken: cancellationToken) { await f() }
    }
}

// MARK: - Async closures on the main actor

extension FutureStream {
    /// Calls async `f` with every result, in a task on the main actor, one call at a time, in order.
    ///
    /// ```swift
    /// FutureStream(value: 3).onComplete(on: .mainActor) { result in
    ///     await Task.yield()
    ///     print(result)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Unsubscribes `f` (it then gets `CancellationError`), or cancels its task.
    ///   - f: The handler.
    public func onComplete(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor (Result<Value, any Error>) async -> Void
    ) {
        onComplete(at: .mainActor, cancellationToken: cancellationToken) { result in await f(result) }
    }

    /// Calls async `f` with every value, in a task on the main actor, one call at a time, in order.
    ///
    /// ```swift
    /// FutureStream(value: 3).onSuccess(on: .mainActor) { value in
    ///     await Task.yield()
    ///     print(value)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Unsubscribes `f`, or cancels its task.
    ///   - f: The handler.
    public func onSuccess(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor (Value) async -> Void
    ) {
        onSuccess(at: .mainActor, cancellationToken: cancellationToken) { value in await f(value) }
    }

    /// Calls async `f` with every error, in a task on the main actor, one call at a time, in order.
    ///
    /// ```swift
    /// FutureStream<Int>(error: FutureError.timeout).onFailure(on: .mainActor) { error in
    ///     await Task.yield()
    ///     print(error)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Unsubscribes `f` (it then gets `CancellationError`), or cancels its task.
    ///   - policy: Which errors of the stream reach `f`: by default every error but
    ///     `CancellationError` (the token's own `CancellationError` always does). See ``ErrorPolicy``.
    ///   - f: The handler.
    public func onFailure(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ f: @escaping @MainActor (any Error) async -> Void
    ) {
        onFailure(at: .mainActor, cancellationToken: cancellationToken, policy: policy) { error in await f(error) }
    }

    /// Calls async `f` once, in a task on the main actor, when the stream finishes.
    ///
    /// ```swift
    /// FutureStream(value: 3).onFinish(on: .mainActor) {
    ///     await Task.yield()
    ///     print("done")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Unsubscribes `f`.
    ///   - f: The handler.
    public func onFinish(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @MainActor () async -> Void
    ) {
        onFinish(at: .mainActor, cancellationToken: cancellationToken) { await f() }
    }
}

// MARK: - Isolated to an actor

// Each call gets the actor as an `isolated` parameter, in a task that enters it; one call at a
// time, in order.

extension FutureStream {
    /// Calls `f` with every result, isolated to `actor`, one call at a time, in order.
    ///
    /// ```swift
    /// actor Log {
    ///     var lines: [String] = []
    ///     func follow(_ stream: FutureStream<String>) {
    ///         stream.onComplete(on: self) { log, result in log.lines.append((try? result.get()) ?? "error") }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As the async `onComplete(on:cancellationToken:_:)`,
    /// with `f` isolated to `actor`.
    ///
    /// - Parameters:
    ///   - actor: The actor `f` is isolated to.
    ///   - cancellationToken: Unsubscribes `f`; it then gets `CancellationError`.
    ///   - f: The handler; its first parameter is `actor`, isolated.
    public func onComplete<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (isolated A, Result<Value, any Error>) -> Void
    ) {
        onComplete(at: .pool, cancellationToken: cancellationToken) { result in await f(actor, result) }
    }

    /// Calls `f` with every value, isolated to `actor`, one call at a time, in order.
    ///
    /// ```swift
    /// actor Scores {
    ///     var best = 0
    ///     func follow(_ scores: FutureStream<Int>) {
    ///         scores.onSuccess(on: self) { scores, value in scores.best = max(scores.best, value) }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `f` is isolated to.
    ///   - cancellationToken: Unsubscribes `f`.
    ///   - f: The handler; its first parameter is `actor`, isolated.
    public func onSuccess<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (isolated A, Value) -> Void
    ) {
        onSuccess(at: .pool, cancellationToken: cancellationToken) { value in await f(actor, value) }
    }

    /// Calls `f` with every error, isolated to `actor`, one call at a time, in order.
    ///
    /// ```swift
    /// actor ErrorLog {
    ///     var errors: [String] = []
    ///     func watch(_ stream: FutureStream<Int>) {
    ///         stream.onFailure(on: self) { log, error in log.errors.append("\(error)") }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `f` is isolated to.
    ///   - cancellationToken: Unsubscribes `f`; it then gets `CancellationError`.
    ///   - policy: Which errors of the stream reach `f`: by default every error but
    ///     `CancellationError` (the token's own `CancellationError` always does). See ``ErrorPolicy``.
    ///   - f: The handler; its first parameter is `actor`, isolated.
    public func onFailure<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        policy: ErrorPolicy = .allErrorsExceptCancellation,
        _ f: @escaping @Sendable (isolated A, any Error) -> Void
    ) {
        onFailure(at: .pool, cancellationToken: cancellationToken, policy: policy) { error in await f(actor, error) }
    }

    /// Calls `f` once, isolated to `actor`, when the stream finishes.
    ///
    /// ```swift
    /// actor Upload {
    ///     var isDone = false
    ///     func watch(_ stream: FutureStream<Int>) { stream.onFinish(on: self) { upload in upload.isDone = true } }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - actor: The actor `f` is isolated to.
    ///   - cancellationToken: Unsubscribes `f`.
    ///   - f: The handler; its parameter is `actor`, isolated.
    public func onFinish<A: Actor>(
        on actor: A,
        cancellationToken: CancellationToken = .none,
        _ f: @escaping @Sendable (isolated A) -> Void
    ) {
        onFinish(at: .pool, cancellationToken: cancellationToken) { await f(actor) }
    }
}
