public import Synchronization  // public: `Lock` is inlinable into clients

/// `Synchronization.Mutex`, made visible to ThreadSanitizer in every build.
///
/// On Linux the standard library's `Mutex` takes its lock in uninstrumented runtime code, so
/// ThreadSanitizer sees no happens-before edge between two critical sections and reports every
/// access to the state it guards as a race — in the test runs of every package that depends on
/// this one, built with a plain `--sanitize=thread`. So each critical section also does an
/// acquiring load of a one-byte `Atomic` as it starts and a releasing *store* to it as it ends:
/// TSan sees those. The mutex orders the critical sections totally, so the store of one section
/// happens before the load of the next, and the edges chain into the order TSan needs. A store
/// rather than a read-modify-write: on x86-64 both the acquiring load and the releasing store are
/// a plain `mov`, and on arm64 an `ldarb`/`stlrb` beside a lock that already fences. Measured
/// with callgrind (Documentation/Guarantees.md): 2 instructions more per critical section (15 → 17;
/// a pthread mutex, which TSan also sees, takes 66 and 40 bytes in an allocation of its own), and
/// no byte more per pending future: the byte lands in padding.
///
/// Inlinable, so that FutureLib's generic code using it is specialized in the client.
@usableFromInline
package struct Lock<State: ~Copyable>: ~Copyable {
    @usableFromInline let mutex: Mutex<State>
    /// ThreadSanitizer's view of `mutex`; its value means nothing.
    @usableFromInline let edge = Atomic<UInt8>(0)

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
            _ = edge.load(ordering: .acquiring)  // the previous section's store happens before this
            defer { edge.store(0, ordering: .releasing) }  // …and this section before the next load
            return try body(&state)
        }
    }

    /// Runs `body` with exclusive access to the state if the lock is free right now; nil (without
    /// running `body`) when another thread holds it. Never call user code from `body`.
    ///
    /// How a cancellation request notices that its one lock is contended (issue 19, scenario 11).
    @inlinable
    package borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending State) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        try mutex.withLockIfAvailable { (state: inout sending State) throws(E) -> sending Result in
            _ = edge.load(ordering: .acquiring)  // the previous section's store happens before this
            defer { edge.store(0, ordering: .releasing) }  // …and this section before the next load
            return try body(&state)
        }
    }
}

extension Lock: @unchecked Sendable where State: ~Copyable {}
// Sendable: as `Mutex`, whose guarantee this forwards: the state is only reached through `withLock`.

/// A lock that guards state stored elsewhere (a generic class's own properties), visible to
/// ThreadSanitizer in the same way as ``Lock``.
///
/// `Mutex<Void>` is a concrete type, so a generic class holding it needs no generic metadata to
/// destroy it; `Lock<State<Value>>` costs several metadata lookups in every unspecialized `deinit`.
@usableFromInline
package struct RawLock: ~Copyable {
    @usableFromInline let mutex = Mutex<Void>(())
    /// ThreadSanitizer's view of `mutex` (see ``Lock``); its value means nothing.
    @usableFromInline let edge = Atomic<UInt8>(0)

    @inlinable
    package init() {}

    /// Runs `body` while holding the lock. Never call user code from `body`.
    @inlinable
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: () throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (_: inout sending Void) throws(E) -> sending Result in
            _ = edge.load(ordering: .acquiring)  // the previous section's store happens before this
            defer { edge.store(0, ordering: .releasing) }  // …and this section before the next load
            return try body()
        }
    }
}

extension RawLock: @unchecked Sendable {}
// Sendable: a mutex is made to be shared between threads.
