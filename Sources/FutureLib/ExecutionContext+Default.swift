/// The shared concurrent context that work and continuations use unless told otherwise.
///
/// Backed by FutureLib's own thread pool, never by Swift's cooperative pool: a test or script
/// that blocks cooperative threads on `Future.value()` cannot starve the work it waits for.
///
/// ```swift
/// let future = Future(on: .default) { try parse(bigFile) }
/// ```
///
/// ### Threads
/// About one runnable thread per processor that the process can use (on Linux, capped by its CPU
/// affinity and its container's CPU limit). When work on the pool blocks in FutureLib's blocking API
/// (`Future.value()`, `Future.wait(timeout:)`), the pool adds a thread while that lasts, so
/// nested blocking does not deadlock. Work that blocks by other means (semaphores, sleeping
/// I/O) occupies a thread: give such work a `DispatchQueue` of its own.
public struct DefaultExecutionContext: ExecutionContext {
    /// Creates the context; prefer ``ExecutionContext/default``.
    ///
    /// ```swift
    /// let context = DefaultExecutionContext()
    /// ```
    public init() {}

    /// Queues `work` on the shared pool; it starts in submission order.
    ///
    /// ```swift
    /// DefaultExecutionContext().execute { print("on a pool thread") }
    /// ```
    ///
    /// - Parameter work: The code to run.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        WorkerPool.shared.submit(.closure(work))
    }
}

extension ExecutionContext where Self == DefaultExecutionContext {
    /// The shared concurrent context: FutureLib's own thread pool.
    ///
    /// ```swift
    /// future.onSuccess(on: .default) { value in store(value) }
    /// ```
    public static var `default`: DefaultExecutionContext {
        DefaultExecutionContext()
    }
}
