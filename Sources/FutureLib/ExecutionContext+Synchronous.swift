/// Runs work on the calling thread: for cheap continuations that need no particular thread.
///
/// Continuations on `.synchronous` run on whichever thread completes the future (or, if it is
/// already complete, the thread that registers them). Keep them short and non-blocking.
///
/// ```swift
/// let doubled = future.map(on: .synchronous) { $0 * 2 }
/// ```
///
/// ### Depth
/// Work runs inline, before `execute` returns, unless it is nested more than a few levels deep
/// in other synchronous work on the same thread; then it runs as soon as the outer work returns.
/// That is what lets a chain of a million dependent futures complete without overflowing the stack.
public struct SynchronousExecutionContext: ExecutionContext {
    /// Creates the context; prefer ``ExecutionContext/synchronous``.
    ///
    /// ```swift
    /// let context = SynchronousExecutionContext()
    /// ```
    public init() {}

    /// Runs `work` on the calling thread.
    ///
    /// ```swift
    /// SynchronousExecutionContext().execute { print("inline") }
    /// ```
    ///
    /// - Parameter work: The code to run.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        Trampoline.run(work)
    }
}

extension ExecutionContext where Self == SynchronousExecutionContext {
    /// Runs work on the calling thread.
    ///
    /// ```swift
    /// future.onComplete(on: .synchronous) { result in log(result) }
    /// ```
    public static var synchronous: SynchronousExecutionContext {
        SynchronousExecutionContext()
    }
}
