#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif os(Windows)
import WinSDK
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
        var first: Work? = work
        // Taken and called as a temporary, released at the end of this statement: what its
        // release queues (a `deinit` that releases a request, whose links cancel or release
        // others) is queued before ``runQueued(on:)`` looks, never left behind once it returns.
        first.take().unsafelyUnwrapped()
        runQueued(on: thread)
    }

    /// ``run(_:)`` for work on `argument`, written as a closure that captures nothing: it
    /// allocates only when the work is queued. Cancelling a linked request from its source's
    /// handler runs at once, so it allocates no closure context (guarded by AllocationCheck
    /// `cancel-chain-with-token`).
    static func run<Argument>(with argument: consuming Argument, _ work: @escaping (Argument) -> Void) {
        let thread = ThreadWork.current
        if thread.isRunning {
            thread.queued.append { [argument] in work(argument) }
            return
        }
        thread.isRunning = true
        var taken: Argument? = consume argument
        work(taken.take().unsafelyUnwrapped)  // released at the end of this statement, as in `run(_:)`
        runQueued(on: thread)
    }

    /// Runs what the work run so far queued, and what that queues, until nothing is left.
    private static func runQueued(on thread: ThreadWork) {
        while true {
            // What the last work queued runs next, first queued first, before older queued work.
            while let queued = thread.queued.popLast() { thread.pending.append(queued) }
            var next = thread.pending.popLast()
            guard next != nil else { break }
            next.take().unsafelyUnwrapped()  // released at the end of this statement, as in `run(_:)`
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

    #if os(Windows)
    private static let key: DWORD = TlsAlloc()  // a thread's state is not released when it exits

    private static func stored() -> UnsafeMutableRawPointer? { TlsGetValue(key) }
    private static func store(_ pointer: UnsafeMutableRawPointer) { _ = TlsSetValue(key, pointer) }
    #else
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

    private static func stored() -> UnsafeMutableRawPointer? { pthread_getspecific(key) }
    private static func store(_ pointer: UnsafeMutableRawPointer) { _ = pthread_setspecific(key, pointer) }
    #endif

    /// This thread's state, made on first use.
    static var current: ThreadWork {
        if let pointer = stored() {
            return Unmanaged<ThreadWork>.fromOpaque(pointer).takeUnretainedValue()
        }
        let new = ThreadWork()
        store(Unmanaged.passRetained(new).toOpaque())
        return new
    }
}
