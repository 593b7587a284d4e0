/// The handlers registered on one request: a slab of slots threaded into a doubly linked list.
///
/// Every operation the request needs is O(1): `append` reuses a free slot or grows the slab,
/// `remove` unlinks a slot by index, and `removeNewest` pops the tail so that cancellation runs
/// handlers newest first. A slot remembers a generation number so that a stale
/// ``CancellationRegistration`` can never remove the handler that reused its slot.
///
/// The lists of a striped request (``RegistrationStripes``) use the same slot field for a stamp:
/// a number from one counter per request, unique and increasing, which orders the handlers of all
/// its lists newest first at cancellation, and serves as the generation too.
///
/// A handler stored through ``CancellationToken/onCancelOrRelease(_:)`` is marked in its slot (the top bit
/// of `stampHigh`, which no stamp reaches): dropped with the list unrun, it is called once more,
/// by the slab's `deinit`, outside every lock, so that it can let go of what it holds.
///
/// A value type whose slab is a ``SlotBuffer`` of its own: no copy-on-write, so no uniqueness
/// check and no bounds check on the hot paths (every index used is a stored key's, checked
/// against `used` once, or a linked slot's). The owner keeps the list inside a `Mutex`, never
/// copies it (it moves it out, as `abandon()` does), and never lets a closure's release (which
/// runs user `deinit`s) happen while the lock is held.
struct RegistrationList {
    typealias Handler = @Sendable () -> Void

    /// Identifies one stored handler: the slot it lives in and the slot's generation when it was stored
    /// (its low 32 bits).
    ///
    /// ``RegistrationStripes`` keeps the number of a stripe in the top 4 bits of `slot`; the keys of a
    /// request's own list have them clear (a list holds at most ``maximumCount`` slots).
    struct Key: Hashable {
        var slot: UInt32
        var generation: UInt32
    }

    /// The most handlers one list holds: the top 4 bits of a key's slot name a stripe.
    static let maximumCount = 1 << 28

    /// 32 bytes: handler 16, generation 4, stamp's high half 4 (what was padding), links 4 + 4.
    fileprivate struct Slot {
        var handler: Handler?
        /// The generation, bumped when the slot is freed; in a stripe, the low half of its handler's stamp.
        var generation: UInt32
        /// In a stripe, the high half of its handler's stamp; 0 in a request's own list.
        var stampHigh: UInt32
        /// Older neighbour while linked; next free slot while free.
        var previous: UInt32
        /// Newer neighbour while linked.
        var next: UInt32
    }

    private static let nil32 = UInt32.max

    /// In `stampHigh`: the handler is called when it is dropped unrun (``append(_:notifiesOnRelease:)``).
    fileprivate static let notifiesOnReleaseBit: UInt32 = 1 << 31

    /// Nil until the first handler: a request that never stores one allocates no slab.
    private var buffer: SlotBuffer?
    private var newest = nil32
    private var freeHead = nil32

    /// Stores `handler` as the newest entry; with `notifiesOnRelease`, a list dropped with it still
    /// stored calls it (see ``CancellationToken/onCancelOrRelease(_:)``).
    mutating func append(_ handler: @escaping Handler, notifiesOnRelease: Bool) -> Key {
        append(handler, stamp: nil, notifiesOnRelease: notifiesOnRelease)
    }

    /// Stores `handler` as the newest entry of a stripe, under `stamp` (unique per request).
    mutating func append(_ handler: @escaping Handler, stamp: UInt64, notifiesOnRelease: Bool) -> Key {
        append(handler, stamp: .some(stamp), notifiesOnRelease: notifiesOnRelease)
    }

    /// Inlined into both callers, so that the request's own list pays nothing for the stamp (a constant nil).
    @inline(__always)
    private mutating func append(_ handler: @escaping Handler, stamp: UInt64?, notifiesOnRelease: Bool) -> Key {
        let stampHigh =
            UInt32(truncatingIfNeeded: (stamp ?? 0) >> 32) | (notifiesOnRelease ? Self.notifiesOnReleaseBit : 0)
        let index: UInt32
        let slots: UnsafeMutablePointer<Slot>
        // Pointers and counts are read out of the buffer at once, never a reference to it kept
        // across writes to `self`: that would cost a retain and a release per call.
        if freeHead != Self.nil32 {
            index = freeHead
            slots = buffer.unsafelyUnwrapped.slots  // a free slot exists, so the buffer does
            freeHead = slots[Int(index)].previous
            slots[Int(index)].handler = handler
            if let stamp { slots[Int(index)].generation = UInt32(truncatingIfNeeded: stamp) }
            slots[Int(index)].stampHigh = stampHigh  // also in a request's own list: the slot's mark
            slots[Int(index)].previous = newest
            slots[Int(index)].next = Self.nil32
        } else {
            if buffer == nil || buffer.unsafelyUnwrapped.used == buffer.unsafelyUnwrapped.slotCapacity {
                buffer = SlotBuffer.make(movingFrom: buffer)
            }
            let used = buffer.unsafelyUnwrapped.used
            precondition(used < Self.maximumCount, "too many cancellation handlers registered on one token")
            index = UInt32(used)
            slots = buffer.unsafelyUnwrapped.slots
            (slots + used).initialize(
                to: Slot(
                    handler: handler,
                    generation: UInt32(truncatingIfNeeded: stamp ?? 0),
                    stampHigh: stampHigh,
                    previous: newest,
                    next: Self.nil32
                )
            )
            buffer.unsafelyUnwrapped.used = used + 1
        }
        if newest != Self.nil32 { slots[Int(newest)].next = index }
        newest = index
        return Key(slot: index, generation: slots[Int(index)].generation)
    }

    /// Whether no handler is stored: O(1).
    var isEmpty: Bool { newest == Self.nil32 }

    /// How many handlers are stored, counted by walking the list: O(n), for tests only.
    func countStored() -> Int {
        var count = 0
        var index = newest
        while index != Self.nil32 {
            count += 1
            index = buffer.unsafelyUnwrapped.slots[Int(index)].previous
        }
        return count
    }

    /// Removes the handler stored under `key`, if it is still there, and returns it.
    mutating func remove(_ key: Key) -> Handler? {
        let index = Int(key.slot)
        guard let used = buffer?.used, index < used else { return nil }
        let slots = buffer.unsafelyUnwrapped.slots
        guard slots[index].generation == key.generation, let handler = slots[index].handler else { return nil }
        slots[index].handler = nil
        let previous = slots[index].previous
        let next = slots[index].next
        if previous != Self.nil32 { slots[Int(previous)].next = next }
        if next != Self.nil32 {
            slots[Int(next)].previous = previous
        } else {
            newest = previous
        }
        slots[index].generation &+= 1
        slots[index].next = Self.nil32
        slots[index].previous = freeHead
        freeHead = key.slot
        return handler
    }

    /// The stamp and key of every stored handler of a stripe: O(n), for a striped cancellation, which
    /// merges the lists of every stripe by stamp.
    func stampsAndKeys(into entries: inout [StampedKey], stripeBits: UInt32) {
        var index = newest
        while index != Self.nil32 {
            let generation = buffer.unsafelyUnwrapped.slots[Int(index)].generation
            let high = buffer.unsafelyUnwrapped.slots[Int(index)].stampHigh & ~Self.notifiesOnReleaseBit
            let stamp = UInt64(high) << 32 | UInt64(generation)
            entries.append(StampedKey(stamp: stamp, key: Key(slot: index | stripeBits, generation: generation)))
            index = buffer.unsafelyUnwrapped.slots[Int(index)].previous
        }
    }

    /// A stored handler's key, with its stamp (in a stripe).
    struct StampedKey {
        var stamp: UInt64
        var key: Key
    }

    /// A stored handler with its key.
    struct Entry {
        var key: Key
        var handler: Handler
    }

    /// Removes the newest handler and returns it with its key: the step of cancellation.
    ///
    /// Leaner than ``remove(_:)``: the slot is emptied but not put on the free list, nor is its
    /// generation bumped. Nothing is stored again once cancellation has begun, and an emptied slot
    /// never matches a key (``remove(_:)`` checks for a handler). The slot is moved out, so the
    /// handler changes hands without a retain and a release.
    mutating func removeNewest() -> Entry? {
        let index = newest
        guard index != Self.nil32 else { return nil }
        let slots = buffer.unsafelyUnwrapped.slots  // a linked slot exists, so the buffer does
        let slot = (slots + Int(index)).move()
        (slots + Int(index)).initialize(
            to: Slot(
                handler: nil,
                generation: slot.generation,
                stampHigh: slot.stampHigh,
                previous: Self.nil32,
                next: Self.nil32
            )
        )
        if slot.previous != Self.nil32 { slots[Int(slot.previous)].next = Self.nil32 }
        newest = slot.previous
        return Entry(key: Key(slot: index, generation: slot.generation), handler: slot.handler!)
    }
}

/// The slab of a ``RegistrationList``: `slotCapacity` slots, of which the first `used` are initialized.
///
/// The slots are allocated in the object itself (a `ManagedBuffer`), so a list's first handler
/// costs one allocation, not two (guarded by AllocationCheck `linked-request`). A class so that
/// the list's storage is a pointer it owns outright, with none of `Array`'s copy-on-write checks;
/// only one list ever holds a buffer. Releasing the buffer destroys the slots, and with them any
/// handler still stored (calling those marked to be notified): the owner drops a list only outside its lock.
private final class SlotBuffer: ManagedBuffer<SlotBuffer.Header, RegistrationList.Slot> {
    // Not Sendable (no `ManagedBuffer` is), and needs not be: the buffer belongs to one list, which
    // lives in a request's locked state and is only read or written with the lock held, or moved
    // out (by `abandon()`) and then dropped.

    struct Header {
        /// The slots asked for (`ManagedBuffer.capacity` may be more, and costs a call to read).
        var capacity: Int
        var used: Int
    }

    /// A buffer with twice the room of `old` (at least 4 slots), holding its slots: moved, not copied.
    static func make(movingFrom old: SlotBuffer?) -> SlotBuffer {
        let capacity = max(4, (old?.slotCapacity ?? 0) * 2)
        let buffer = unsafeDowncast(
            create(minimumCapacity: capacity) { _ in Header(capacity: capacity, used: 0) },
            to: SlotBuffer.self
        )
        if let old {
            buffer.slots.moveInitialize(from: old.slots, count: old.used)
            buffer.used = old.used
            old.used = 0
        }
        return buffer
    }

    /// The slots, valid while the buffer is alive (they are part of it).
    var slots: UnsafeMutablePointer<RegistrationList.Slot> {
        withUnsafeMutablePointerToElements { $0 }
    }

    // The header is read and written through its pointer, never through `header`: a class's stored
    // property costs a dynamic exclusivity check per access (guarded by callgrind
    // `cancellation-register` and `cancellation-cancel`).
    var slotCapacity: Int { withUnsafeMutablePointerToHeader { $0.pointee.capacity } }

    var used: Int {
        get { withUnsafeMutablePointerToHeader { $0.pointee.used } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.used = newValue } }
    }

    deinit {
        withUnsafeMutablePointers { header, slots in
            for index in 0..<header.pointee.used {
                let slot = (slots + index).move()
                // Marked, and dropped unrun: called once more, to let go of what it holds.
                if slot.stampHigh & RegistrationList.notifiesOnReleaseBit != 0, let handler = slot.handler { handler() }
            }
        }
    }
}
