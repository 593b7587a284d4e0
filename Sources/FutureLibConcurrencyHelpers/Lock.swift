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
/// a plain `mov`, and on arm64 an `ldarb`/`stlrb` beside a lock that already fences; and the byte
/// lands in padding. (A pthread mutex, which TSan also sees, costs more instructions and an
/// allocation of its own; the figures are in Documentation/Performance.md, "Figures behind the guarantees".)
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
    /// How a cancellation request notices that its one lock is contended (``SpinLock``'s stripes).
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

/// A lock that guards state stored elsewhere (a generic class's own properties): each future's.
///
/// A one-byte test-and-test-and-set lock, taken with an acquiring exchange and released with a
/// releasing *store* (a plain `mov` on x86-64, `stlrb` on arm64): a `Mutex` pays a
/// read-modify-write to release too, and a future's lock is taken twice per `map` (its `add`, and
/// the derived future's `complete` (guarded by `RoundsDriver 2` and callgrind `futurelib-map`).
/// ThreadSanitizer sees the exchange and the store,
/// so no edge of its own is needed (``Lock`` needs one beside its `Mutex`).
///
/// Why spinning is fine here: a future's sections are a few dozen instructions, call no user code
/// and never wait, so a holder that runs releases it at once. A waiter spins briefly, then yields
/// its processor (`sched_yield`), so a holder that was preempted gets to run; after many yields it
/// sleeps a little, and a real-time waiter sleeps at once, since its yield gives the processor only
/// to threads of its own priority, never to a holder of a lower one (``SpinWait``, shared with the
/// registration stripes' `SpinLock`).
///
/// Not generic, and holding no state: a generic class holding it needs no generic metadata to
/// destroy it; `Lock<State<Value>>` costs several metadata lookups in every unspecialized `deinit`.
@usableFromInline
package struct RawLock: ~Copyable {
    /// Whether a thread holds the lock.
    @usableFromInline let isLocked = Atomic<Bool>(false)

    @inlinable
    package init() {}

    /// Runs `body` while holding the lock. Never call user code from `body`.
    @inlinable
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: () throws(E) -> sending Result
    ) throws(E) -> sending Result {
        // Acquiring: the previous holder's section (before its releasing store) happens before ours.
        if isLocked.exchange(true, ordering: .acquiring) { lockContended() }
        defer { isLocked.store(false, ordering: .releasing) }  // our section happens before the next holder's
        return try body()
    }

    /// The waiting loop, out of line: reads (which keep the line shared) until the lock looks free,
    /// and only then tries the exchange (which takes the line exclusively). Spins, yields and
    /// sleeps as ``SpinWait`` says.
    @usableFromInline @inline(never)
    borrowing func lockContended() {
        SpinWait.wait { !isLocked.load(ordering: .relaxed) && !isLocked.exchange(true, ordering: .acquiring) }
    }
}

extension RawLock: @unchecked Sendable {}
// Sendable: an atomic, made to be shared between threads.
