public import Synchronization  // public: `SpinLock` is inlinable into its users

/// A one-byte test-and-test-and-set lock, for the registration stripes' per-processor locks only
/// (Cancellation's `RegistrationStripes`); everything else uses ``Lock``.
///
/// What it buys (guarded by `RoundsDriver 11-2`, two threads sharing a token): a cheaper
/// registration on a striped token than with ``Lock``. The lock is taken with an acquiring
/// exchange and released with a releasing *store*, a plain `mov` on x86-64, where ``Lock`` pays
/// for the `Mutex` (a read-modify-write to take it and another to release it) and its
/// ThreadSanitizer edge. ThreadSanitizer sees the exchange and the store, so the sections it
/// guards stay ordered in its view, with no edge of their own.
///
/// Why spinning is fine here: a stripe belongs to a processor, and a thread takes the stripe of
/// the processor it runs on, so two threads meet on one stripe's lock only when one of them moved
/// between reading its processor number and taking the lock, or when a cancellation closes the
/// stripes. The sections are a few dozen instructions and call no user code. A waiter spins
/// briefly, then yields its processor (`sched_yield`), so a holder that was preempted gets to run
/// instead of a waiter burning a core; after many yields it sleeps a little, and a real-time
/// waiter sleeps at once, since its yield gives the processor only to threads of its own priority,
/// never to a holder of a lower one (``SpinWait``).
@usableFromInline
package struct SpinLock: ~Copyable {
    /// Whether a thread holds the lock.
    @usableFromInline let isLocked = Atomic<Bool>(false)

    @inlinable
    package init() {}

    /// Takes the lock, waiting while another thread holds it.
    @inlinable
    package borrowing func lock() {
        // Acquiring: the previous holder's section (before its releasing store) happens before ours.
        if !isLocked.exchange(true, ordering: .acquiring) { return }
        lockContended()
    }

    /// Releases the lock; the caller holds it.
    @inlinable
    package borrowing func unlock() {
        isLocked.store(false, ordering: .releasing)  // our section happens before the next holder's
    }

    /// The waiting loop, out of line: reads (which keep the line shared) until the lock looks free,
    /// and only then tries the exchange (which takes the line exclusively). Spins, yields and
    /// sleeps as ``SpinWait`` says.
    @usableFromInline @inline(never)
    borrowing func lockContended() {
        SpinWait.wait { !isLocked.load(ordering: .relaxed) && !isLocked.exchange(true, ordering: .acquiring) }
    }
}

extension SpinLock: @unchecked Sendable {}
// Sendable: an atomic, made to be shared between threads.
