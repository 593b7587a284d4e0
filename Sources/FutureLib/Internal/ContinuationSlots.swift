/// The continuations of a pending future that has more than one, in registration order, each
/// removable by its token in O(1) (``Slots``).
///
/// A token's removal leaves nil in the continuation's slot, which its ``CancellableCallback``
/// knows (``CancellableCallback/slot``), instead of finding it by a scan and shifting the rest.
/// `CallgrindDriver futurelib-cancel-pending-<N>`, a random continuation's token cancelled and a
/// replacement registered, with N pending: 82,600 / 799,000 / 7.9 M instructions at
/// N = 10³ / 10⁴ / 10⁵ with the scan, about 4,100–4,500 at every N now;
/// `scaling-cancel-pending`, wall-clock per cancel: 3.6 µs / 65 µs / 0.71 ms / 9 ms at
/// N = 10³ … 10⁶ with the scan, 0.3–0.9 µs now (the rise is cache misses, not work).
///
/// Completion runs the continuations in registration order, skipping the empty slots; the last
/// one removed drops the array (``FutureState/Waiting``).
@usableFromInline
typealias ContinuationSlots<Value: Sendable> = Slots<Continuation<Value>>

extension Continuation: Slotted {
    @inlinable
    func isNamed(by cancellable: CancellableCallback<Value>) -> Bool {
        uses(cancellable)
    }

    @inlinable
    static func slot(of cancellable: CancellableCallback<Value>) -> Int {
        cancellable.slot
    }
}

extension Slots {
    /// Whether every continuation runs on `.synchronous`.
    @inlinable
    func allSynchronous<Value>() -> Bool where Element == Continuation<Value> {
        slots.allSatisfy { $0?.isSynchronous ?? true }
    }
}
