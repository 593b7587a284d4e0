public import Synchronization  // public: read and written by inlinable code

/// Whether a future has a result, and whether its completer is still handing continuations to
/// contexts other than `.synchronous`: one byte, beside the future's lock.
///
/// `isCompleted` reads it without the lock. The completer writes it under the lock when it
/// completes, and ends its dispatching with one compare-and-swap, without the lock, unless a
/// registration queued behind it meanwhile (see ``FutureState/add(_:isSynchronous:phase:)``).
/// So a completion that hands its continuations to a serial context takes the future's lock once.
@usableFromInline
struct CompletionPhase: ~Copyable, Sendable {
    /// No result yet.
    @usableFromInline static var pending: UInt8 { 0 }
    /// The result; every continuation registered before it was handed to its context.
    @usableFromInline static var completed: UInt8 { 1 }
    /// The result, while the completer hands continuations to contexts other than `.synchronous`.
    @usableFromInline static var dispatching: UInt8 { 2 }
    /// As `dispatching`, and continuations on such contexts registered meanwhile wait in the
    /// future's state for the completer to dispatch them after the earlier ones.
    @usableFromInline static var queued: UInt8 { 3 }

    @usableFromInline let value: Atomic<UInt8>

    @inlinable
    init(completed: Bool) {
        value = Atomic(completed ? Self.completed : Self.pending)
    }

    /// Whether the future has a result (lock-free).
    @inlinable
    var isCompleted: Bool {
        // Acquiring: pairs with the releasing store in `complete(dispatching:)`.
        value.load(ordering: .acquiring) != Self.pending
    }

    /// Whether the future has its result and its completer has handed every continuation to its
    /// context: final (no state follows it), so a registration that sees it may dispatch at once.
    @inlinable
    var isFinal: Bool {
        // Acquiring: pairs with the releasing exchange in `endDispatching()` (or the releasing
        // store in `complete(dispatching:)`), so a job executed now comes after the completer's.
        value.load(ordering: .acquiring) == Self.completed
    }

    /// The completer, under the future's lock: the future has its result now.
    @inlinable
    func complete(dispatching: Bool) {
        value.store(dispatching ? Self.dispatching : Self.completed, ordering: .releasing)
    }

    /// A registration on a context other than `.synchronous` that found the result, under the
    /// future's lock: true if the completer is still dispatching, and will dispatch this one after
    /// the earlier ones (the caller stores it); false if it may dispatch it itself.
    @inlinable
    func joinDispatching() -> Bool {
        // Acquiring: reading `completed` pairs with the releasing exchange in `endDispatching()`,
        // so this registration's `execute` comes after the completer's.
        switch value.load(ordering: .acquiring) {
        case Self.completed: return false
        case Self.queued: return true
        default:
            let (exchanged, _) = value.compareExchange(
                expected: Self.dispatching,
                desired: Self.queued,
                successOrdering: .relaxed,  // the queued continuation is published by the lock
                failureOrdering: .acquiring  // `completed`, as above
            )
            return exchanged
        }
    }

    /// The completer, without the lock, once it handed its continuations to their contexts: true
    /// if dispatching is over; false if some are queued (take them with the lock, then try again).
    @inlinable
    func endDispatching() -> Bool {
        value.compareExchange(expected: Self.dispatching, desired: Self.completed, ordering: .releasing).exchanged
    }

    /// The completer, under the future's lock, when it took the queued continuations.
    @inlinable
    func resumeDispatching() {
        // Relaxed: registrations read it under the lock, and only this thread ends dispatching.
        value.store(Self.dispatching, ordering: .relaxed)
    }
}
