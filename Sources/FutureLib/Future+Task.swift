// From a Swift task to a future. The other way, into structured concurrency, is
// `try await future.value()`: it suspends without holding a thread, and cancelling the awaiting
// task abandons only that wait. A `future.task` property would add nothing but a second spelling
// of `Task { try await future.value() }`, which also lets the caller choose priority and isolation.

extension Future {
    /// Creates a future completed with the result of `task`; the token cancels the task.
    ///
    /// Use it to hand the outcome of an unstructured `Task` to code that takes futures.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// let task = Task { () async throws -> Int in
    ///     try await Task.sleep(for: .milliseconds(1))
    ///     return 42
    /// }
    /// let answer = Future(task, cancellationToken: request.token)
    /// ```
    ///
    /// ### Cancellation
    /// Cancelling the token cancels `task` (before `cancel()` returns; at once if the token is
    /// already cancelled) and fails the future with `CancellationError` at once, without waiting
    /// for the task to notice. Cancelling the task by other means fails the future with whatever
    /// the task then throws.
    ///
    /// ### Threads
    /// The future waits for `task` in a task on FutureLib's own threads; `task` itself runs where
    /// it was created.
    ///
    /// - Parameters:
    ///   - task: The task whose result completes the future.
    ///   - cancellationToken: Cancels `task` and fails the future with `CancellationError`.
    public convenience init(_ task: Task<Value, any Error>, cancellationToken: CancellationToken = .none) {
        self.init()
        if cancellationToken.isCancellationRequested { task.cancel() }
        run(at: .pool, cancellationToken: cancellationToken) {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// Creates a future completed with the value of a task that cannot fail; the token cancels the task.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// let task = Task { () async -> Int in 42 }
    /// let answer = Future(task, cancellationToken: request.token)
    /// ```
    ///
    /// ### Cancellation
    /// As ``init(_:cancellationToken:)-(Task<Value,Error>,_)``: the token cancels `task` and
    /// fails the future with `CancellationError` at once.
    ///
    /// - Parameters:
    ///   - task: The task whose value completes the future.
    ///   - cancellationToken: Cancels `task` and fails the future with `CancellationError`.
    public convenience init(_ task: Task<Value, Never>, cancellationToken: CancellationToken = .none) {
        self.init()
        if cancellationToken.isCancellationRequested { task.cancel() }
        run(at: .pool, cancellationToken: cancellationToken) {
            await withTaskCancellationHandler {
                await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }
}
