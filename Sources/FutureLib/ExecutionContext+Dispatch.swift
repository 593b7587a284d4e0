public import Dispatch

/// A `DispatchQueue` is an execution context: work is submitted with `async`.
///
/// A serial queue runs continuations in registration order. A blocking wait (`value()`,
/// `wait(timeout:)`) on a queue other than the main queue runs the FutureLib work queued on that
/// queue while it waits, so it does not hang on work queued behind it.
///
/// ```swift
/// let queue = DispatchQueue(label: "com.example.parser")
/// future.onSuccess(on: queue) { document in index(document) }
/// ```
extension DispatchQueue: ExecutionContext {
    /// Submits `work` to this queue with `async`.
    ///
    /// ```swift
    /// DispatchQueue.global().execute { print("on a Dispatch thread") }
    /// ```
    ///
    /// - Parameter work: The code to run.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        QueueSubmission.async(on: self, work)  // `async`, through the queue's QueueJobs
    }
}
