/// A timer that a ``TimerHeap`` orders: its fields belong to the heap's owner, and are only read
/// or written with the owner's lock held.
protocol HeapTimer: AnyObject {
    var deadline: Duration { get set }
    /// When it was armed, relative to the other timers of its heap.
    var sequence: UInt64 { get set }
    /// The position in the heap; -1 while not in it.
    var index: Int { get set }
}

/// The pending timers of a clock (``ManualClock``, ``SystemClock``): a binary min-heap ordered by
/// deadline, then by the order in which they were armed. Each timer knows its position, so
/// removing or moving one is O(log n). The owner keeps the heap inside its lock; every method
/// expects that lock held.
struct TimerHeap<Timer: HeapTimer> {
    private var timers: [Timer] = []
    /// Counts arming calls, so that timers due at the same instant fire in the order they were armed.
    private var armed: UInt64 = 0

    var count: Int { timers.count }

    /// The deadline of the earliest timer, if any.
    var earliestDeadline: Duration? { timers.first?.deadline }

    /// Puts `timer` in the heap due at `deadline`, or moves it there if it already is; either way
    /// it counts as armed now (after every timer armed before).
    mutating func schedule(_ timer: Timer, at deadline: Duration) {
        if timer.index >= 0 { remove(timer) }
        timer.deadline = deadline
        timer.sequence = armed
        armed &+= 1
        timer.index = timers.count
        timers.append(timer)
        siftUp(timer.index)
    }

    /// Takes `timer` out of the heap, if it is in it.
    mutating func remove(_ timer: Timer) {
        let index = timer.index
        guard index >= 0 else { return }
        let last = timers.count - 1
        if index != last {
            timers.swapAt(index, last)
            timers[index].index = index
        }
        timers.removeLast()
        timer.index = -1
        guard index < timers.count else { return }
        siftDown(index)
        siftUp(index)
    }

    /// Takes out and returns the earliest timer if it is due at `instant` or before.
    mutating func popDue(at instant: Duration) -> Timer? {
        guard let first = timers.first, first.deadline <= instant else { return nil }
        remove(first)
        return first
    }

    private func precedes(_ a: Int, _ b: Int) -> Bool {
        let (x, y) = (timers[a], timers[b])
        return x.deadline < y.deadline || (x.deadline == y.deadline && x.sequence < y.sequence)
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        timers.swapAt(a, b)
        timers[a].index = a
        timers[b].index = b
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < timers.count else { return }
            let right = left + 1
            let child = right < timers.count && precedes(right, left) ? right : left
            guard precedes(child, parent) else { return }
            swapAt(child, parent)
            parent = child
        }
    }
}
