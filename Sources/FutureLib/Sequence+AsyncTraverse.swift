extension Sequence where Element: Sendable {
    /// Runs async `task` for each element, each in a task of its own, at most `maxConcurrency` at
    /// a time, and collects the values in order.
    ///
    /// ```swift
    /// let lengths: Future<[Int]> = ["a", "bb"].traverse(maxConcurrency: 2) { text in
    ///     try await Task.sleep(for: .milliseconds(1))
    ///     return text.count
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``traverse(on:cancellationToken:maxConcurrency:_:)-(_,_,_,(Element)->Future<U>)``, with
    /// each `task` in a task whose jobs run on `context` (`.default` and `.synchronous`: FutureLib's
    /// own threads, never Swift's cooperative pool). The token also cancels the running tasks and
    /// fails the result with `CancellationError` at once.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the running tasks, starts no more, and fails the result.
    ///   - maxConcurrency: The most tasks running at once, at least 1; `nil` for no cap.
    ///   - task: The work for one element.
    /// - Returns: A future of all values, in input order.
    @inlinable  // specialized in the caller, as `Future { async … }` is (`RoundsDriver 9-traverse`)
    public func traverse<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        maxConcurrency: Int? = nil,
        _ task: @escaping @Sendable @concurrent (Element) async throws -> U
    ) -> Future<[U]> {
        let placement = TaskPlacement.on(context)
        return traverse(on: .synchronous, cancellationToken: cancellationToken, maxConcurrency: maxConcurrency) {
            element in
            let future = Future<U>()
            future.run(at: placement, cancellationToken: cancellationToken) { try await task(element) }
            return future
        }
    }
}
