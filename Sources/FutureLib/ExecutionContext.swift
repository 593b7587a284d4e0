/// Where continuations and work run: a queue, a thread pool, or the calling thread.
///
/// Every API that runs your code takes an `on:` context. The package provides
/// ``SynchronousExecutionContext`` (`.synchronous`), ``DefaultExecutionContext`` (`.default`),
/// `DispatchQueue`, and ``LimitedExecutionContext``, which caps how many jobs run at once.
/// Conform your own type to run work somewhere else (an event loop, an actor's queue):
///
/// ```swift
/// struct MainQueue: ExecutionContext {
///     func execute(_ work: @escaping @Sendable () -> Void) {
///         DispatchQueue.main.async(execute: work)
///     }
/// }
/// future.onSuccess(on: MainQueue()) { value in label.text = "\(value)" }
/// ```
///
/// ### Requirements
/// `execute(_:)` must run `work` exactly once, eventually. It may run it before returning
/// (as `.synchronous` does) or later on any thread. A serial context runs work in submission order,
/// and so continuations registered on it run in registration order.
public protocol ExecutionContext: Sendable {
    /// Runs `work` exactly once, now or later, on this context.
    ///
    /// ```swift
    /// DispatchQueue.main.execute { print("on the main queue") }
    /// ```
    ///
    /// - Parameter work: The code to run.
    func execute(_ work: @escaping @Sendable () -> Void)
}

/// Identifies the synchronous and the default context without a dynamic cast, for the hot paths
/// of registration and completion.
extension ExecutionContext {
    @inlinable
    var isSynchronous: Bool {
        ObjectIdentifier(Self.self) == ObjectIdentifier(SynchronousExecutionContext.self)
    }

    @inlinable
    var isDefault: Bool {
        ObjectIdentifier(Self.self) == ObjectIdentifier(DefaultExecutionContext.self)
    }
}
