/// The handlers registered on one request: slots threaded into a doubly linked list, the first two
/// inline, the others in a slab.
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
/// outside every lock, so that it can let go of what it holds: by the slab's `deinit`, and for the
/// inline slots by ``notifyInlineReleased()``, which whoever drops a list with handlers calls first.
///
/// Why two slots inline: most requests hold one or two handlers at a time (a client's request the
/// link of the request linked to it; a per-request token a `map` and a `flatMap`), and the slab was
/// an allocation per request for them (guarded by AllocationCheck `linked-request` and
/// `cancel-chain-with-token`). A list is two slots bigger for it (Internals.md gives the sizes).
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

    /// Slots 0 and 1 are stored in the list itself; slot `n` from 2 on is the slab's `n - 2`.
    private static let inlineCount: UInt32 = 2

    /// 32 bytes: handler 16, generation 4, stamp's high half 4 (what was padding), links 4 + 4.
    fileprivate struct Slot {
        static let unused = Slot(
            handler: nil,
            generation: 0,
            stampHigh: 0,
            previous: RegistrationList.nil32,
            next: RegistrationList.nil32
        )

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

    /// Slot 0.
    private var first = Slot.unused
    /// Slot 1.
    private var second = Slot.unused
    /// Nil until the third handler: a request that never stores more than two allocates no slab.
    private var buffer: SlotBuffer?
    private var newest = nil32
    private var freeHead = nil32
    /// How many of the inline slots were ever used (0, 1 or 2): they are used before the slab.
    private var inlineUsed: UInt32 = 0

    /// Reads slot `index` in place, inline or in the slab. `index` is a stored key's (checked), a
    /// linked slot's or a free one's, so the slab exists when `index` is past the inline slots.
    ///
    /// Closures rather than a `_read`/`_modify` subscript: a yield in more than one branch kept the
    /// coroutine from being inlined, and its frame was an allocation per access (guarded by
    /// AllocationCheck `linked-request`). No `R` here is a function type, which would be reabstracted.
    @inline(__always)
    private func read<R>(_ index: UInt32, _ body: (borrowing Slot) -> R) -> R {
        switch index {
        case 0: return body(first)
        case 1: return body(second)
        default: return body(buffer.unsafelyUnwrapped.slots[Int(index &- Self.inlineCount)])
        }
    }

    /// Changes slot `index` in place (see ``read(_:_:)``).
    @inline(__always)
    private mutating func modify<R>(_ index: UInt32, _ body: (inout Slot) -> R) -> R {
        switch index {
        case 0: return body(&first)
        case 1: return body(&second)
        default:
            let slots = buffer.unsafelyUnwrapped.slots
            return body(&slots[Int(index &- Self.inlineCount)])
        }
    }

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
        let generation: UInt32
        if freeHead != Self.nil32 {
            index = freeHead
            let newest = newest
            (freeHead, generation) = modify(index) { slot in
                let nextFree = slot.previous
                slot.handler = handler
                if let stamp { slot.generation = UInt32(truncatingIfNeeded: stamp) }
                slot.stampHigh = stampHigh  // also in a request's own list: the slot's mark
                slot.previous = newest
                slot.next = Self.nil32
                return (nextFree, slot.generation)
            }
        } else {
            generation = UInt32(truncatingIfNeeded: stamp ?? 0)
            let slot = Slot(
                handler: handler,
                generation: generation,
                stampHigh: stampHigh,
                previous: newest,
                next: Self.nil32
            )
            if inlineUsed < Self.inlineCount {
                index = inlineUsed
                inlineUsed += 1
                modify(index) { $0 = slot }
            } else {
                // Pointers and counts are read out of the buffer at once, never a reference to it
                // kept across writes to `self`: that would cost a retain and a release per call.
                if buffer == nil || buffer.unsafelyUnwrapped.used == buffer.unsafelyUnwrapped.slotCapacity {
                    buffer = SlotBuffer.make(movingFrom: buffer)
                }
                let used = buffer.unsafelyUnwrapped.used
                precondition(used < Self.maximumCount - 2, "too many cancellation handlers registered on one token")
                index = UInt32(used) + Self.inlineCount
                (buffer.unsafelyUnwrapped.slots + used).initialize(to: slot)
                buffer.unsafelyUnwrapped.used = used + 1
            }
        }
        if newest != Self.nil32 { modify(newest) { $0.next = index } }
        newest = index
        return Key(slot: index, generation: generation)
    }

    /// Whether no handler is stored: O(1).
    var isEmpty: Bool { newest == Self.nil32 }

    /// Whether the list has a slab (it held more than two handlers at once): an empty list may still have one.
    var hasSlab: Bool { buffer != nil }

    /// How many handlers are stored, counted by walking the list: O(n), for tests only.
    func countStored() -> Int {
        var count = 0
        var index = newest
        while index != Self.nil32 {
            count += 1
            index = read(index) { $0.previous }
        }
        return count
    }

    /// Removes the handler stored under `key`, if it is still there, and returns it.
    mutating func remove(_ key: Key) -> Handler? {
        let index = key.slot
        if index < Self.inlineCount {
            guard index < inlineUsed else { return nil }
        } else {
            guard let used = buffer?.used, Int(index - Self.inlineCount) < used else { return nil }
        }
        // One access to the slot: checks it, moves it out and puts it on the free list.
        let freeHead = freeHead
        let removed: Slot? = modify(index) { slot in
            guard slot.generation == key.generation, slot.handler != nil else { return nil }
            let taken = withUnsafeMutablePointer(to: &slot) { Self.take(from: $0) }
            slot.generation &+= 1
            slot.previous = freeHead
            slot.next = Self.nil32
            return taken
        }
        guard let removed else { return nil }
        let (previous, next) = (removed.previous, removed.next)
        if previous != Self.nil32 { modify(previous) { $0.next = next } }
        if next != Self.nil32 {
            modify(next) { $0.previous = previous }
        } else {
            newest = previous
        }
        self.freeHead = index
        return removed.handler
    }

    /// The stamp and key of every stored handler of a stripe: O(n), for a striped cancellation, which
    /// merges the lists of every stripe by stamp.
    func stampsAndKeys(into entries: inout [StampedKey], stripeBits: UInt32) {
        var index = newest
        while index != Self.nil32 {
            let (generation, high, previous) = read(index) { ($0.generation, $0.stampHigh, $0.previous) }
            let stamp = UInt64(high & ~Self.notifiesOnReleaseBit) << 32 | UInt64(generation)
            entries.append(StampedKey(stamp: stamp, key: Key(slot: index | stripeBits, generation: generation)))
            index = previous
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
    /// never matches a key (``remove(_:)`` checks for a handler). The handler is moved out, so it
    /// changes hands without a retain and a release.
    mutating func removeNewest() -> Entry? {
        let index = newest
        guard index != Self.nil32 else { return nil }
        let slot = takeSlot(index)
        modify(index) { $0.previous = Self.nil32 }
        if slot.previous != Self.nil32 { modify(slot.previous) { $0.next = Self.nil32 } }
        newest = slot.previous
        return Entry(key: Key(slot: index, generation: slot.generation), handler: slot.handler!)
    }

    /// Moves slot `index` out, leaving it without its handler: the handler changes hands without
    /// a retain and a release. Through a pointer to the slot, not `Optional.take()` on its handler: a
    /// closure passed through a generic function is reabstracted, an allocation per call (guarded
    /// by AllocationCheck `cancel-chain-with-token`).
    @inline(__always)
    private mutating func takeSlot(_ index: UInt32) -> Slot {
        switch index {
        case 0: return withUnsafeMutablePointer(to: &first) { Self.take(from: $0) }
        case 1: return withUnsafeMutablePointer(to: &second) { Self.take(from: $0) }
        default: return Self.take(from: buffer.unsafelyUnwrapped.slots + Int(index &- Self.inlineCount))
        }
    }

    @inline(__always)
    private static func take(from slot: UnsafeMutablePointer<Slot>) -> Slot {
        let taken = slot.move()
        slot.initialize(
            to: Slot(
                handler: nil,
                generation: taken.generation,
                stampHigh: taken.stampHigh,
                previous: taken.previous,
                next: taken.next
            )
        )
        return taken
    }

    /// Calls the marked handlers still stored in the inline slots, as the slab's `deinit` does for
    /// its own: for whoever drops a list that may hold handlers, outside every lock, before it drops it.
    func notifyInlineReleased() {
        if first.stampHigh & Self.notifiesOnReleaseBit != 0, let handler = first.handler { handler() }
        if second.stampHigh & Self.notifiesOnReleaseBit != 0, let handler = second.handler { handler() }
    }
}

/// The slab of a ``RegistrationList``: `slotCapacity` slots, of which the first `used` are initialized.
///
/// The slots are allocated in the object itself (a `ManagedBuffer`), so a list's third handler
/// costs one allocation, not two (guarded by AllocationCheck `request-with-handlers`). A class so that
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
