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

    /// Enters an inline frame if the depth allows: returns this thread's state (opaque, for
    /// ``leaveInline(_:)``, which the caller must call after running its work), or nil when the
    /// caller must defer the work with ``run(_:)`` instead. A pair of calls rather than a closure:
    /// the continuation runs its callback in place, with no copy of it to capture (a retain and a
    /// release per `.synchronous` continuation; callgrind `futurelib-map`).
    @usableFromInline
    static func enterInline() -> UnsafeMutableRawPointer? {
        PerThread.withCurrent { thread in
            guard thread.inlineDepth < maximumDepth else { return nil }
            thread.inlineDepth += 1
            return Unmanaged.passUnretained(thread).toOpaque()
        }
    }

    /// Leaves the inline frame that ``enterInline()`` entered; the outermost one drains what
    /// deeper frames deferred.
    @usableFromInline
    static func leaveInline(_ thread: UnsafeMutableRawPointer) {
        // The thread's key holds the object: no retain (see `PerThread.withCurrent`).
        Unmanaged<PerThread>.fromOpaque(thread)._withUnsafeGuaranteedRef { finish($0) }
    }

    @inline(__always)
    private static func finish(_ thread: PerThread) {
        guard thread.inlineDepth == 1, !thread.deferred.isEmpty else {
            thread.inlineDepth -= 1
            return
        }
        drainDeferred(thread)
    }

    /// The outermost frame's end: runs what deeper frames deferred, at depth 1 so that it may nest
    /// again. Out of line, so that every other frame's end is a decrement with no register saves
    /// (callgrind `futurelib-map`).
    @inline(never)
    private static func drainDeferred(_ thread: PerThread) {
        while let next = thread.deferred.popFirst() { next() }
        thread.inlineDepth = 0
    }
}
