/// Runs `body` in a child task that `token`'s cancellation cancels, so that code written for Swift task
/// cancellation stops while the calling task goes on (GRPCCore writes an RPC's status from the server's task, and
/// a caller's own task is not the call's to cancel).
///
/// The child is an `async let`: fewer allocations than a task group's child (the group and the closure it runs
/// come on top of the task), and the handler on the token holds the task alone, as `withCancellation(_:operation:)`
/// does with an object of its own.
///
/// - Parameters:
///   - token: The token whose cancellation cancels the child task.
///   - body: The work.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
func runInChildTask<T: Sendable>(
    cancelledBy token: CancellationToken,
    _ body: @Sendable () async throws -> T
) async throws -> T {
    async let value = runCancelled(by: token, body)
    return try await value
}

/// Runs `operation` in the current task, and cancels the task when `token` is cancelled: `withCancellation(_:)`
/// with a handler that holds the task, not an object that holds it.
private func runCancelled<T>(by token: CancellationToken, _ operation: () async throws -> T) async throws -> T {
    guard let task = withUnsafeCurrentTask(body: { $0.map(CurrentTask.init) }) else { return try await operation() }
    let registration = token.onCancel { task.cancel() }
    defer { registration.unregisterAndWait() }  // the task outlives a handler running now
    return try await operation()
}

/// The current task, for the token's handler in ``runCancelled(by:_:)``.
// Sendable: `UnsafeCurrentTask.cancel()` is thread-safe; the only hazard is using the task after it ended. The task
// makes it inside `runCancelled`, and only the token's handler uses it, which `runCancelled` unregisters (waiting
// for it if it is running) before its scope, and so the task, can end.
private struct CurrentTask: @unchecked Sendable {
    let task: UnsafeCurrentTask

    func cancel() {
        task.cancel()
    }
}
