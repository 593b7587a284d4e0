/// Runs synchronous continuations inline, up to a nesting depth, and defers deeper ones to the
/// outermost frame on the same thread, so that completing a chain of a million futures on
/// ``SynchronousExecutionContext`` uses a bounded amount of stack.
@usableFromInline
enum Trampoline: Sendable {
    /// Deeper than this, work is queued instead of nested.
    static let maximumDepth = 16

    /// Runs `work` now, or after the current inline frames return when nested too deeply.
    @usableFromInline
    static func run(_ work: @escaping @Sendable () -> Void) {
        PerThread.withCurrent { thread in
            guard thread.inlineDepth < maximumDepth else {
                thread.deferred.append(work)
                return
            }
            thread.inlineDepth += 1
            work()
            finish(thread)
        }
    }

    /// Runs `work` inline if the depth allows and returns true; returns false (running nothing)
    /// when the caller must defer it with ``run(_:)`` instead. Saves a closure allocation on the
    /// common path.
    @usableFromInline
    static func runInline(_ work: () -> Void) -> Bool {
        PerThread.withCurrent { thread in
            guard thread.inlineDepth < maximumDepth else { return false }
            thread.inlineDepth += 1
            work()
            finish(thread)
            return true
        }
    }

    private static func finish(_ thread: PerThread) {
        guard thread.inlineDepth == 1 else {
            thread.inlineDepth -= 1
            return
        }
        // Outermost frame: drain what deeper frames deferred, at depth 1 so it may nest again.
        while let next = thread.deferred.popFirst() { next() }
        thread.inlineDepth = 0
    }
}
