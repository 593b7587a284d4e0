/// The continuations of a pending future that has more than one, in registration order, each
/// removable by its token in O(1) (``Slots``).
///
/// A token's removal leaves nil in the continuation's slot, which its ``CancellableCallback``
/// knows (``CancellableCallback/slot``), instead of finding it by a scan and shifting the rest
/// (guarded by `CallgrindDriver futurelib-cancel-pending-<N>` and `scaling-cancel-pending`;
/// Documentation/Internals.md, "The three concepts", has the figures).
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
