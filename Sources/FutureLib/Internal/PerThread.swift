import FutureLibThreadLocal

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// State that belongs to one thread: the synchronous trampoline and, on pool threads, the pool.
///
/// Owned by a pthread key and reached through a C thread-local pointer (the standard library has no
/// thread-local storage). A task-local would
/// not do: tasks created on this thread would inherit it and touch it from other threads.
final class PerThread {
    // The properties are `@exclusivity(unchecked)`: the object belongs to one thread, and no
    // access spans a call that could reach it again. Checked, they cost two runtime calls per
    // `.synchronous` continuation.

    /// How many synchronous continuations are running inline on this thread right now.
    @exclusivity(unchecked) var inlineDepth = 0
    /// Work deferred because `inlineDepth` reached the limit; drained by the outermost frame.
    @exclusivity(unchecked) var deferred = FIFO<@Sendable () -> Void>()
    /// Links of chains being released (``DeferredRelease``), dropped one after the other.
    @exclusivity(unchecked) var released = FIFO<Any>()
    /// Whether a ``DeferredRelease`` is draining `released` on this thread.
    @exclusivity(unchecked) var isReleasing = false
    /// The pool this thread works for, if any.
    @exclusivity(unchecked) var pool: WorkerPool?
    /// The capped contexts whose slots the jobs running on this thread hold, outermost first.
    @exclusivity(unchecked) var heldSlots: [LimitedExecutionContext] = []
    /// How many more `await future.value()` on this thread skip their watch (``AwaitSpin``).
    @exclusivity(unchecked) var awaitWatchesToSkip = 0

    /// Owns each thread's state: releases it when the thread exits. Read only when the state is
    /// made; the hot path reads the C thread-local pointer (`futurelib_thread_local_get`), which
    /// costs a few instructions where `pthread_getspecific` is a call (callgrind `futurelib-map`).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            // Cleared first: what the release runs on this thread (a `deinit` that completes a
            // future) finds no state and makes a new one, which the key releases in turn.
            futurelib_thread_local_set(nil)
            #if canImport(Darwin)
            Unmanaged<PerThread>.fromOpaque(pointer).release()
            #else
            if let pointer { Unmanaged<PerThread>.fromOpaque(pointer).release() }
            #endif
        }
        precondition(status == 0, "pthread_key_create failed")
        return key
    }()

    /// This thread's state, created on first use.
    static var current: PerThread {
        if let pointer = futurelib_thread_local_get() {
            return Unmanaged<PerThread>.fromOpaque(pointer).takeUnretainedValue()
        }
        return made()
    }

    /// Makes this thread's state, stored in the key (which owns it) and in the thread-local pointer.
    @inline(never)
    private static func made() -> PerThread {
        let state = PerThread()
        let pointer = Unmanaged.passRetained(state).toOpaque()
        pthread_setspecific(key, pointer)
        futurelib_thread_local_set(pointer)
        return state
    }

    /// Calls `body` with this thread's state, without the retain and release that ``current``
    /// costs: the thread's key holds the object until the thread ends, and `body` runs on this
    /// thread. Two atomic operations less per `.synchronous` continuation (the trampoline's depth
    /// check on every `map`; callgrind `futurelib-map`).
    @inline(__always)
    static func withCurrent<R>(_ body: (PerThread) -> R) -> R {
        guard let pointer = futurelib_thread_local_get() else { return body(made()) }
        return Unmanaged<PerThread>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
    }
}

@available(*, unavailable)
extension PerThread: Sendable {}
