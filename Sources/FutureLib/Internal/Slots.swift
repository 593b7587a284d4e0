/// Elements in the order they were added, each removable in O(1) because it knows its slot: the
/// continuations of a pending future (``ContinuationSlots``) and the subscribers of a stream
/// (``StreamState``). Kept under its owner's lock.
///
/// A removal leaves nil in the element's slot, which the element was told (``Slotted/placed(at:)``),
/// instead of finding it by a scan and shifting the rest: that cost O(n) under the owner's lock per
/// removal, O(n²) when the n elements of one long-lived future or stream all leave (a disconnect
/// storm on a server whose every request waits on one shutdown future, or whose every client
/// listens to one broadcast stream).
///
/// When more slots are empty than full, the elements left move down, in order, and learn their
/// new slots: O(n) once per n/2 removals, so O(1) amortised, and the array never holds more than
/// twice the elements left. The owner walks ``slots`` in order, skipping the empty ones. The last
/// removal leaves the array as it is (all nil): the owner drops it.
@usableFromInline
struct Slots<Element: Slotted>: Sendable {
    /// In the order they were added; nil where one was removed.
    @usableFromInline var slots: [Element?]
    /// How many slots are nil.
    @usableFromInline var removed: Int

    /// No elements.
    @inlinable
    init() {
        slots = []
        removed = 0
    }

    /// The slots of a second element and the first (a future's first continuation is not in
    /// slots until a second arrives).
    @inlinable
    init(_ first: consuming Element, _ second: consuming Element) {
        first.placed(at: 0)
        second.placed(at: 1)
        slots = [first, second]
        removed = 0
    }

    /// How many elements there are.
    @inlinable
    var count: Int { slots.count - removed }

    /// Whether every element was removed (or none added).
    @inlinable
    var isEmpty: Bool { removed == slots.count }

    /// Adds `element` after the others.
    @inlinable
    mutating func append(_ element: consuming Element) {
        element.placed(at: slots.count)
        slots.append(element)
    }

    /// Removes the element that `key` names; nil if it is not here (it was removed already, or it
    /// was never added: its slot then holds nothing, or another element).
    @inlinable
    mutating func remove(_ key: Element.Key) -> Element? {
        let slot = Element.slot(of: key)
        // Checked in place (optional chaining): binding the element to check it copies it, a retain
        // and a release per removal (callgrind `futurelib-cancel-pending-<N>`).
        guard slot < slots.count, slots[slot]?.isNamed(by: key) == true else { return nil }
        let element = slots[slot].take()
        removed += 1
        if removed > slots.count - removed, !isEmpty { compact() }
        return element
    }

    /// Moves the elements left to the front, in order, and tells them where.
    @inlinable
    mutating func compact() {
        slots.removeAll { $0 == nil }
        for index in slots.indices { slots[index]?.placed(at: index) }
        removed = 0
    }
}

/// An element of ``Slots``: it knows the slot it is stored at, or its key does, so that removing
/// it needs no scan.
@usableFromInline
protocol Slotted: Sendable {
    /// What a removal names the element by: the object its token's handler holds.
    associatedtype Key: AnyObject

    /// Records that the element is stored at `slot`; called under the owner's lock.
    func placed(at slot: Int)

    /// Whether `key` names this element.
    func isNamed(by key: Key) -> Bool

    /// The slot where `key`'s element was placed last; stale once it left (then
    /// ``isNamed(by:)`` is false for whatever is there).
    static func slot(of key: Key) -> Int
}
