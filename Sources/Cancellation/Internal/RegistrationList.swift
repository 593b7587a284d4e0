/// The handlers registered on one request: a slab of slots threaded into a doubly linked list.
///
/// Every operation the request needs is O(1): `append` reuses a free slot or grows the slab,
/// `remove` unlinks a slot by index, and `removeNewest` pops the tail so that cancellation runs
/// handlers newest first. A slot remembers a generation number so that a stale
/// ``CancellationRegistration`` can never remove the handler that reused its slot.
///
/// A plain value type: the owner keeps it inside a `Mutex` and never lets a closure's release
/// (which runs user `deinit`s) happen while the lock is held.
struct RegistrationList {
    typealias Handler = @Sendable () -> Void

    /// Identifies one stored handler: the slot it lives in and the slot's generation when it was stored.
    struct Key: Hashable {
        var slot: UInt32
        var generation: UInt32
    }

    private struct Slot {
        var handler: Handler?
        var generation: UInt32
        /// Older neighbour while linked; next free slot while free.
        var previous: UInt32
        /// Newer neighbour while linked.
        var next: UInt32
    }

    private static let nil32 = UInt32.max

    private var slots: [Slot] = []
    private var newest = nil32
    private var freeHead = nil32

    /// How many handlers are stored.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Stores `handler` as the newest entry.
    mutating func append(_ handler: @escaping Handler) -> Key {
        let index: UInt32
        if freeHead != Self.nil32 {
            index = freeHead
            freeHead = slots[Int(index)].previous
            slots[Int(index)].handler = handler
            slots[Int(index)].previous = newest
            slots[Int(index)].next = Self.nil32
        } else {
            precondition(slots.count < Int(Self.nil32), "too many cancellation handlers registered on one token")
            index = UInt32(slots.count)
            slots.append(Slot(handler: handler, generation: 0, previous: newest, next: Self.nil32))
        }
        if newest != Self.nil32 { slots[Int(newest)].next = index }
        newest = index
        count += 1
        return Key(slot: index, generation: slots[Int(index)].generation)
    }

    /// Removes the handler stored under `key`, if it is still there, and returns it.
    mutating func remove(_ key: Key) -> Handler? {
        let index = Int(key.slot)
        guard index < slots.count, slots[index].generation == key.generation, slots[index].handler != nil else {
            return nil
        }
        return unlink(key.slot)
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
    /// never matches a key (``remove(_:)`` checks for a handler). The slot is moved out through a
    /// buffer pointer: one uniqueness check, no bounds checks, and no retain and release of the
    /// handler (an `Entry` is a nominal type, so the closure crosses the generic result unwrapped).
    mutating func removeNewest() -> Entry? {
        let index = newest
        guard index != Self.nil32 else { return nil }
        count -= 1
        let previous = slots[Int(index)].previous
        newest = previous
        return slots.withUnsafeMutableBufferPointer { slots -> Entry in
            let slot = (slots.baseAddress.unsafelyUnwrapped + Int(index)).move()
            (slots.baseAddress.unsafelyUnwrapped + Int(index)).initialize(
                to: Slot(handler: nil, generation: slot.generation, previous: Self.nil32, next: Self.nil32)
            )
            if previous != Self.nil32 { slots[Int(previous)].next = Self.nil32 }
            return Entry(key: Key(slot: index, generation: slot.generation), handler: slot.handler!)
        }
    }

    /// Unlinks the occupied slot `index`, frees it and moves its handler out.
    ///
    /// The links are rewritten through one buffer pointer: one uniqueness check for all of them
    /// instead of one per write, and no bounds checks (every index here is a linked slot's or its
    /// neighbours'). The handler is read apart: a closure that crosses a generic API (the buffer
    /// pointer's result, or `Optional.take()`) is wrapped in a heap-allocated thunk.
    private mutating func unlink(_ index: UInt32) -> Handler {
        let i = Int(index)
        let handler = slots[i].handler!
        slots[i].handler = nil
        let freeHead = self.freeHead
        let next = slots.withUnsafeMutableBufferPointer { slots in
            let previous = slots[i].previous
            let next = slots[i].next
            if previous != Self.nil32 { slots[Int(previous)].next = next }
            if next != Self.nil32 { slots[Int(next)].previous = previous }
            slots[i].generation &+= 1
            slots[i].next = Self.nil32
            slots[i].previous = freeHead
            return (previous, next)
        }
        if next.1 == Self.nil32 { newest = next.0 }
        self.freeHead = index
        count -= 1
        return handler
    }
}
