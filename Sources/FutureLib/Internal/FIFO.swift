/// A first-in, first-out queue that releases each element as it leaves.
///
/// The one queue of the package's hand-written job and result buffers (``LimitedExecutionContext``,
/// the worker pool, the trampoline, a stream's iterator). A ring buffer over raw storage: `append`
/// and `popFirst` are O(1), amortised for `append` (the storage doubles when full, moving each
/// element once with a memory copy). `popFirst` moves the element out of its slot, so a job's
/// closure and everything it captured are released when the job leaves the queue, not when the
/// queue next drains. A queue that drains with a large buffer gives the buffer back, so that a
/// burst does not pin its memory.
///
/// Noncopyable, so that the storage has one owner and needs no copy-on-write check on the hot
/// path. `package`, not `internal`, only so that its tests can reach it from release builds too.
/// Inlinable (`@usableFromInline`), so that a stream iterator's buffer, whose element type is the
/// client's, is specialized in the client: unspecialized, each `append` and `popFirst` looks up
/// generic metadata (guarded by `RoundsDriver 12`).
@usableFromInline
package struct FIFO<Element>: ~Copyable {
    /// The slots, nil until the first `append`; the `count` elements start at `head` and wrap around.
    @usableFromInline var slots: UnsafeMutablePointer<Element>?
    /// How many elements fit before the storage grows.
    @usableFromInline package internal(set) var capacity = 0
    @usableFromInline var head = 0
    /// How many elements are queued.
    @usableFromInline package internal(set) var count = 0

    /// The capacity kept when the queue drains; a larger buffer is released.
    @inlinable static var retainedCapacity: Int { 1024 }

    /// An empty queue; it allocates nothing until the first `append`.
    @inlinable package init() {}

    deinit {
        guard let slots else { return }
        let front = Swift.min(count, capacity - head)
        (slots + head).deinitialize(count: front)
        slots.deinitialize(count: count - front)
        slots.deallocate()
    }

    /// Whether nothing is queued.
    @inlinable package var isEmpty: Bool { count == 0 }

    /// Adds `element` at the back.
    @inlinable package mutating func append(_ element: consuming Element) {
        if count == capacity { grow() }
        var tail = head + count
        if tail >= capacity { tail -= capacity }
        (slots.unsafelyUnwrapped + tail).initialize(to: element)
        count += 1
    }

    /// Removes and returns the front element, whose slot then holds nothing; nil when empty.
    @inlinable package mutating func popFirst() -> Element? {
        guard count > 0, let slots else { return nil }
        let element = (slots + head).move()
        count -= 1
        if count == 0 {
            head = 0
            if capacity > Self.retainedCapacity {
                slots.deallocate()
                self.slots = nil
                capacity = 0
            }
        } else {
            head += 1
            if head == capacity { head = 0 }
        }
        return element
    }

    /// Empties the queue and returns what it held, so that the caller can release the elements
    /// later (for example after unlocking).
    @inlinable package mutating func removeAll() -> FIFO {
        var taken = FIFO()
        swap(&taken, &self)
        return taken
    }

    /// Doubles the storage (called when it is full), moving the elements to its front in order.
    @usableFromInline mutating func grow() {
        let grown = UnsafeMutablePointer<Element>.allocate(capacity: Swift.max(8, capacity * 2))
        if let slots {
            let front = capacity - head
            grown.moveInitialize(from: slots + head, count: front)
            (grown + front).moveInitialize(from: slots, count: head)
            slots.deallocate()
        }
        slots = grown
        capacity = Swift.max(8, capacity * 2)
        head = 0
    }
}

// Sendable: the storage is owned by this one noncopyable value; sending the queue sends its elements.
extension FIFO: @unchecked Sendable where Element: Sendable {}
