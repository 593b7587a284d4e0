/// Runs `body` in a child task that `token`'s cancellation cancels, so that code written for Swift task
/// cancellation stops while the calling task goes on (GRPCCore writes an RPC's status from the server's task, and
/// a caller's own task is not the call's to cancel).
///
/// The child is an `async let`: fewer allocations than a task group's child (the group and the closure it runs
/// come on top of the task).
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
    async let value = withCancellation(token) { try await body() }
    return try await value
}
