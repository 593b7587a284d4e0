/// The continuations of a pending future that has more than one, in registration order, each
/// removable by its token in O(1).
///
/// A token's removal leaves nil in the continuation's slot, which its ``CancellableCallback``
/// knows (``CancellableCallback/slot``), instead of finding it by a scan and shifting the rest:
/// that cost O(n) under the future's lock per removal, O(n²) when the n continuations waiting
/// on one long-lived future are all cancelled (a disconnect storm on a server whose every request
/// waits on one shutdown future). `CallgrindDriver futurelib-cancel-pending-<N>`, a random
/// continuation's token cancelled and a replacement registered, with N pending: 82,600 / 799,000
/// / 7.9 M instructions at N = 10³ / 10⁴ / 10⁵ with the scan, about 4,100–4,500 at every N now;
/// `scaling-cancel-pending`, wall-clock per cancel: 3.6 µs / 65 µs / 0.71 ms / 9 ms at
/// N = 10³ … 10⁶ with the scan, 0.3–0.9 µs now (the rise is cache misses, not work).
///
/// When more slots are empty than full, the continuations left move down, in order, and their
/// callbacks learn their new slots: O(n) once per n/2 removals, so O(1) amortised, and the array
/// never holds more than twice the continuations that wait. Completion runs the continuations in
/// registration order, skipping the empty slots.
@usableFromInline
struct ContinuationSlots<Value: Sendable>: Sendable {
    /// In registration order; nil where a token removed one.
    @usableFromInline var slots: [Continuation<Value>?]
    /// How many slots are nil.
    @usableFromInline var removed: Int

    /// The slots of a second continuation and the first.
    @inlinable
    init(_ first: consuming Continuation<Value>, _ second: consuming Continuation<Value>) {
        first.placed(at: 0)
        second.placed(at: 1)
        slots = [first, second]
        removed = 0
    }

    /// How many continuations there are.
    @inlinable
    var count: Int { slots.count - removed }

    /// Whether a token removed every continuation.
    @inlinable
    var isEmpty: Bool { removed == slots.count }

    /// Whether every continuation runs on `.synchronous`.
    @inlinable
    var allSynchronous: Bool {
        slots.allSatisfy { $0?.isSynchronous ?? true }
    }

    /// Adds `continuation` after the others.
    @inlinable
    mutating func append(_ continuation: consuming Continuation<Value>) {
        continuation.placed(at: slots.count)
        slots.append(continuation)
    }

    /// Removes the continuation that `cancellable` belongs to; nil if it is not here (it ran, or
    /// was removed already: its slot then holds nothing or another continuation).
    @inlinable
    mutating func remove(_ cancellable: CancellableCallback<Value>) -> Continuation<Value>? {
        let slot = cancellable.slot
        guard slot < slots.count, slots[slot]?.uses(cancellable) == true else { return nil }
        let continuation = slots[slot].take()
        removed += 1
        if removed > slots.count - removed, !isEmpty { compact() }
        return continuation
    }

    /// Moves the continuations left to the front, in order, and tells their callbacks where.
    @inlinable
    mutating func compact() {
        slots.removeAll { $0 == nil }
        for index in slots.indices { slots[index]?.placed(at: index) }
        removed = 0
    }
}
