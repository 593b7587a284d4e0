public import FutureLib
public import NIOCore

/// A SwiftNIO `EventLoop` as an ``FutureLib/ExecutionContext``: continuations run on the loop's thread.
///
/// `EventLoop` is a protocol, so it cannot conform to `ExecutionContext` itself; this wrapper does, and
/// `.eventLoop(_:)` spells it at the call site. Use it to continue on the loop that owns a channel, so that the
/// continuation may touch the channel's pipeline and loop-bound state without hopping again.
///
/// ```swift
/// let loop = group.next()
/// user.onSuccess(on: .eventLoop(loop)) { user in
///     loop.preconditionInEventLoop()
///     print(user)
/// }
/// ```
///
/// ### Thread and order
/// ``execute(_:)`` hands the work to `EventLoop.execute(_:)`: it always runs later, on the loop's thread, never
/// inline (even when called on that loop), so a continuation cannot grow the caller's stack. The loop runs tasks in
/// the order they were submitted, so continuations given this context run in registration order.
///
/// ### A loop that has shut down
/// An `EventLoop` that has shut down does not run new tasks (NIO drops them and logs a warning): a continuation
/// given such a loop never runs. Shut a loop down only after what it serves is done.
public struct EventLoopExecutionContext: ExecutionContext, Sendable {
    /// The loop that runs the work.
    ///
    /// ```swift
    /// let context = EventLoopExecutionContext(loop)
    /// context.eventLoop.preconditionInEventLoop()  // traps unless called on `loop`
    /// ```
    public let eventLoop: any EventLoop

    /// Wraps `eventLoop`.
    ///
    /// ```swift
    /// let context = EventLoopExecutionContext(channel.eventLoop)
    /// future.onComplete(on: context) { _ in channel.close(promise: nil) }
    /// ```
    ///
    /// - Parameter eventLoop: The loop that runs the work.
    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Submits `work` to the loop with `EventLoop.execute(_:)`.
    ///
    /// ```swift
    /// EventLoopExecutionContext(loop).execute { loop.preconditionInEventLoop() }
    /// ```
    ///
    /// ### Thread
    /// `work` runs once, later, on the loop's thread (never inline), unless the loop has shut down.
    ///
    /// - Parameter work: The code to run.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        eventLoop.execute(work)
    }
}

extension ExecutionContext where Self == EventLoopExecutionContext {
    /// The context that runs work on `eventLoop`'s thread.
    ///
    /// ```swift
    /// let loop = channel.eventLoop
    /// let length = body.map(on: .eventLoop(loop)) { $0.readableBytes }
    /// ```
    ///
    /// - Parameter eventLoop: The loop that runs the work.
    /// - Returns: An ``EventLoopExecutionContext`` on `eventLoop`.
    public static func eventLoop(_ eventLoop: any EventLoop) -> EventLoopExecutionContext {
        EventLoopExecutionContext(eventLoop)
    }
}
