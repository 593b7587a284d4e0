/// Runs `operation` in the current task, and cancels the task when `token` is cancelled.
///
/// Use it to make token-based cancellation reach code written for Swift task cancellation
/// (`Task.checkCancellation()`, `Task.sleep`, URLSession's async API):
///
/// ```swift
/// let request = CancellationRequest(cancelAfter: .seconds(2))
/// try await withCancellation(request.token) {
///     try await Task.sleep(for: .seconds(60))  // throws CancellationError after 2 s
/// }
/// ```
///
/// ### Semantics
/// - When the token is cancelled while `operation` runs, the current task is cancelled before
///   ``CancellationRequest/cancel()`` returns. A token that is already cancelled cancels the task
///   before `operation` starts.
/// - Task cancellation cannot be undone: the task stays cancelled after this returns.
/// - When `operation` returns, the handler on the token is removed (waiting for it if it is
///   running right now), so a later cancellation does not touch the task.
///
/// - Parameters:
///   - token: The token whose cancellation cancels the current task.
///   - operation: The work to run.
/// - Returns: What `operation` returns.
/// - Throws: What `operation` throws.
public func withCancellation<T>(
    _ token: CancellationToken,
    operation: () async throws -> T
) async rethrows -> T {
    // Outside a task there is nothing to cancel.
    guard token.canBeCancelled, let task = withUnsafeCurrentTask(body: { $0.map(CurrentTaskHandle.init) }) else {
        return try await operation()
    }
    let registration = token.onCancel { task.cancel() }
    defer {
        registration.unregisterAndWait()  // the task outlives a handler running now…
        task.forget()  // …and one released later, unrun (its request abandoned), holds no task
    }
    return try await operation()
}

/// Runs `body` with a token that is cancelled when the current task is cancelled.
///
/// Use it to hand task cancellation to token-based APIs (futures, libraries that take a token):
///
/// ```swift
/// func thumbnail(for url: URL) async throws -> Image {
///     try await withTaskCancellationToken { token in
///         try await imageLoader.load(url, cancellationToken: token).value()
///     }
/// }
/// ```
///
/// ### Semantics
/// - The token is cancelled as soon as the task is: on the thread that cancels the task, through
///   the task's cancellation handler. If the task is already cancelled, the token is cancelled
///   before `body` starts.
/// - After `body` returns, the token's request is released: the token can no longer be cancelled
///   by the task, and handlers still stored on it are released without running.
///
/// - Parameter body: The work, given the token.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
public func withTaskCancellationToken<T>(
    _ body: (CancellationToken) async throws -> T
) async rethrows -> T {
    let request = CancellationRequest()
    return try await withTaskCancellationHandler {
        try await body(request.token)
    } onCancel: {
        request.cancel()
    }
}

/// The current task, made available to a cancellation handler for the duration of a
/// ``withCancellation(_:operation:)`` scope, and forgotten when the scope ends.
///
/// An object the scope empties, not the task itself in the handler's closure: a handler dropped
/// unrun, because its request can no longer be cancelled, is released by the thread that dropped
/// the request's last reference, maybe after `unregisterAndWait()` returned (it did not run, so
/// nothing waits for it). Its closure must then hold no task: an `async let` child's ends with its
/// scope.
// Sendable: `UnsafeCurrentTask.cancel()` is thread-safe; the only hazard is using the task after
// it ended. The handle is created by the task itself inside `withCancellation`, and only the
// token's handler uses it, which `withCancellation` unregisters, waiting for it if it is running,
// before it forgets the task: a handler's `cancel()` happens before `forget()`, and after it no
// handler runs. `forget()` and the last release (maybe on another thread) are ordered by the
// reference count.
private final class CurrentTaskHandle: @unchecked Sendable {
    private var task: UnsafeCurrentTask?

    init(_ task: UnsafeCurrentTask) {
        self.task = task
    }

    func cancel() {
        task?.cancel()
    }

    /// Drops the task, in its own scope, while it is alive.
    func forget() {
        task = nil
    }
}
