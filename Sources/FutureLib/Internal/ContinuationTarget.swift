public import Dispatch  // public: `DispatchQueue` is stored by inlinable code

/// Where a continuation runs, stored in one word.
///
/// Every case is either empty or a class reference, so the enum takes a single pointer (its
/// tag lives in the pointer's spare bits). Most continuations are combinators' on
/// `.synchronous`, and `.default` and `DispatchQueue` are the common other contexts: none of
/// them allocates. Only another context, such as a user's own struct or a
/// ``LimitedExecutionContext``, is boxed once when the continuation is registered.
@usableFromInline
enum ContinuationTarget: Sendable {
    case synchronous
    case queue(DispatchQueue)
    case other(ContextBox)

    /// The target for `context`; specialized callers fold the type tests away.
    @inlinable
    init(_ context: some ExecutionContext) {
        if context.isSynchronous {
            self = .synchronous
        } else if context.isDefault {
            self = .other(.default)
        } else if let queue = context as? DispatchQueue {
            self = .queue(queue)
        } else {
            self = .other(ContextBox(context))
        }
    }

    @inlinable
    var isSynchronous: Bool {
        if case .synchronous = self { return true }
        return false
    }

    /// Runs `work` on the target, as its context's `execute` does.
    @inlinable
    func execute(_ work: @escaping @Sendable () -> Void) {
        switch self {
        case .synchronous: Trampoline.run(work)
        case .queue(let queue): QueueSubmission.async(on: queue, work)  // `async`, through its QueueJobs
        case .other(let box): box.context.execute(work)
        }
    }
}

/// An execution context in a class reference, for ``ContinuationTarget``.
@usableFromInline
final class ContextBox: Sendable {
    @usableFromInline let context: any ExecutionContext

    @inlinable
    init(_ context: any ExecutionContext) {
        self.context = context
    }

    /// The box of `.default`, shared by all its continuations.
    @usableFromInline static let `default` = ContextBox(DefaultExecutionContext())
}
