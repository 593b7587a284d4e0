/// A first-in, first-out queue that releases each element as it leaves.
///
/// The one queue of the package's hand-written job and result buffers (``LimitedExecutionContext``,
/// the worker pool, the trampoline, a stream's iterator). A ring buffer: `append` and `popFirst` are
/// O(1) (amortised: the storage doubles when full, moving each element once), and `popFirst` clears
/// the slot it reads, so a job's closure and everything it captured are released when the job
/// leaves the queue, not when the queue next drains. A queue that drains with a large buffer gives
/// the buffer back, so a burst does not pin its memory.
///
/// `package`, not `internal`, only so that its tests can reach it from release builds too.
package struct FIFO<Element> {
    /// The slots; `nil` outside the `count` elements that start at `head` and wrap around.
    private var slots: ContiguousArray<Element?> = []
    private var head = 0
    /// How many elements are queued.
    package private(set) var count = 0

    /// The capacity kept when the queue drains; a larger buffer is released.
    static var retainedCapacity: Int { 1024 }

    package init() {}

    /// Whether nothing is queued.
    package var isEmpty: Bool { count == 0 }

    /// How many elements fit before the storage grows (for tests).
    package var capacity: Int { slots.count }

    /// Adds `element` at the back.
    package mutating func append(_ element: Element) {
        if count == slots.count { grow() }
        var tail = head + count
        if tail >= slots.count { tail -= slots.count }
        slots[tail] = element
        count += 1
    }

    /// Removes and returns the front element, releasing its slot; nil when empty.
    package mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = slots[head].take()
        count -= 1
        if count == 0 {
            head = 0
            if slots.count > Self.retainedCapacity { slots = [] }
        } else {
            head += 1
            if head == slots.count { head = 0 }
        }
        return element
    }

    /// Empties the queue and returns what it held, so that the caller can release the elements
    /// later (for example after unlocking).
    package mutating func removeAll() -> FIFO {
        var taken = FIFO()
        swap(&taken, &self)
        return taken
    }

    /// Doubles the storage, moving the elements to its front in order.
    private mutating func grow() {
        let capacity = Swift.max(8, slots.count * 2)
        var grown = ContiguousArray<Element?>()
        grown.reserveCapacity(capacity)
        for offset in 0..<count {
            var index = head + offset
            if index >= slots.count { index -= slots.count }
            grown.append(slots[index].take())
        }
        grown.append(contentsOf: repeatElement(nil, count: capacity - count))
        slots = grown
        head = 0
    }
}

extension FIFO: Sendable where Element: Sendable {}
