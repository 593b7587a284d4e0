public import Synchronization  // public: `Lock` is inlinable into clients

/// `Synchronization.Mutex`, made visible to ThreadSanitizer.
///
/// On Linux the standard library's `Mutex` takes its lock in uninstrumented runtime code, so
/// ThreadSanitizer sees no happens-before edge between two critical sections and reports every
/// access to protected state as a race. Built with `-D FUTURELIB_TSAN` (as `make tsan` does), each
/// critical section also does a release/acquire pair on an `Atomic`, which ThreadSanitizer does see.
/// Other builds compile to the plain `Mutex`. Inlinable, so that FutureLib's generic code using it
/// is specialized in the client.
@usableFromInline
package struct Lock<State: ~Copyable>: ~Copyable {
    @usableFromInline let mutex: Mutex<State>
    #if FUTURELIB_TSAN
    @usableFromInline let edge = Atomic<Int>(0)
    #endif

    @inlinable
    package init(_ initialState: consuming sending State) {
        mutex = Mutex(initialState)
    }

    /// Runs `body` with exclusive access to the state. Never call user code from `body`.
    @inlinable
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

/// A lock that guards state stored elsewhere (a generic class's own properties), with the same
/// ThreadSanitizer edge as ``Lock``.
///
/// `Mutex<Void>` is a concrete type, so a generic class holding it needs no generic metadata to
/// destroy it; `Lock<State<Value>>` costs several metadata lookups in every unspecialized `deinit`.
@usableFromInline
package struct RawLock: ~Copyable {
    @usableFromInline let mutex = Mutex<Void>(())
    #if FUTURELIB_TSAN
    @usableFromInline let edge = Atomic<Int>(0)
    #endif

    @inlinable
    package init() {}

    /// Runs `body` while holding the lock. Never call user code from `body`.
    @inlinable
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: () throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (_: inout sending Void) throws(E) -> sending Result in
            #if FUTURELIB_TSAN
            _ = edge.load(ordering: .acquiring)
            defer { edge.add(1, ordering: .releasing) }
            #endif
            return try body()
        }
    }
}

extension RawLock: @unchecked Sendable {}
// Sendable: a mutex is made to be shared between threads.
