#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns cancellation work that would nest — a linked request cancelling the requests linked to
/// it, a handler registered from a handler that runs at once, a released request releasing the
/// requests that only it kept — into a loop on the calling thread, so that a chain of any depth
/// runs in constant stack.
///
/// ``run(_:)`` runs its work at once, unless this thread is already running work of the
/// trampoline: then the work is queued, and runs when the work that queued it has returned, before
/// the outermost ``run(_:)`` returns. Queued work runs depth first, in the order it was queued: the
/// order that nesting would have given, each piece after its parent returned instead of inside it.
///
/// Only the paths that can nest go through it; a plain `cancel()` of a request without links
/// does not touch it (callgrind `cancellation-cancel`).
enum Trampoline {
    typealias Work = () -> Void

    /// Runs `work` now on this thread, or, inside work this trampoline runs on this thread, after it.
    static func run(_ work: @escaping Work) {
        let thread = ThreadWork.current
        if thread.isRunning {
            thread.queued.append(work)
            return
        }
        thread.isRunning = true
        var next: Work? = work
        while let current = next {
            current()
            // What `current` queued runs next, first queued first, before older queued work.
            while let queued = thread.queued.popLast() { thread.pending.append(queued) }
            next = thread.pending.popLast()
        }
        thread.isRunning = false
        if thread.pending.capacity > 1_024 { thread.pending = [] }  // a deep chain's storage
    }
}

/// The trampoline's state for one thread, kept in a pthread key and released with its thread.
private final class ThreadWork {
    /// Whether ``Trampoline/run(_:)`` is running work on this thread.
    var isRunning = false
    /// The work queued by the piece running now, in the order it was queued.
    var queued: [Trampoline.Work] = []
    /// The work still to run, the next on top.
    var pending: [Trampoline.Work] = []

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
            Unmanaged<ThreadWork>.fromOpaque(pointer).release()
            #else
            if let pointer { Unmanaged<ThreadWork>.fromOpaque(pointer).release() }
            #endif
        }
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// This thread's state, made on first use.
    static var current: ThreadWork {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadWork>.fromOpaque(pointer).takeUnretainedValue()
        }
        let new = ThreadWork()
        pthread_setspecific(key, Unmanaged.passRetained(new).toOpaque())
        return new
    }
}
