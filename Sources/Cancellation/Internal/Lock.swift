import Synchronization

/// `Synchronization.Mutex`, made visible to ThreadSanitizer.
///
/// On Linux the standard library's `Mutex` takes its lock in uninstrumented runtime code, so
/// ThreadSanitizer sees no happens-before edge between two critical sections and reports every
/// access to protected state as a race. Built with `-D FUTURELIB_TSAN` (as `make tsan` does), each
/// critical section also does a release/acquire pair on an `Atomic`, which ThreadSanitizer does see.
/// Other builds compile to the plain `Mutex`.
package struct Lock<State: ~Copyable>: ~Copyable {
    private let mutex: Mutex<State>
    #if FUTURELIB_TSAN
    private let edge = Atomic<Int>(0)
    #endif

    package init(_ initialState: consuming sending State) {
        mutex = Mutex(initialState)
    }

    /// Runs `body` with exclusive access to the state. Never call user code from `body`.
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending State) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (state: inout sending State) throws(E) -> sending Result in
            #if FUTURELIB_TSAN
            _ = edge.load(ordering: .acquiring)
            defer { edge.add(1, ordering: .releasing) }
            #endif
            return try body(&state)
        }
    }
}

extension Lock: @unchecked Sendable where State: ~Copyable {}
// Sendable: as `Mutex`, whose guarantee this forwards: the state is only reached through `withLock`.
