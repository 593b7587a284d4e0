/// A timer that a ``TimerHeap`` orders, and the closure it runs: what the timers of
/// ``ManualClock`` and ``SystemClock`` share. Its fields belong to the heap's owner, and are only
/// read or written with the owner's lock held.
class HeapTimer: @unchecked Sendable {
    // Sendable: every `var` is only read or written with the lock of the heap's owner held (the
    // closure is read under it, and called on the copy read out).
    private var fireClosure: (@Sendable () -> Void)?
    final var deadline = Duration.zero
    /// When it was armed, relative to the other timers of its heap.
    final var sequence: UInt64 = 0
    /// The position in the heap; -1 while not in it.
    final var index = -1

    init(fire: @escaping @Sendable () -> Void) {
        fireClosure = fire
    }

    /// A timer whose closure is given later, by ``setFire(_:)``: until then it counts as cancelled.
    /// For an owner that is its own timer, and makes the closure that captures it after `init`.
    init() {}

    /// With the lock held: gives a timer made by ``init()`` its closure, before it is first scheduled.
    final func setFire(_ fire: @escaping @Sendable () -> Void) {
        fireClosure = fire
    }

    /// With the lock held: whether it was cancelled (only ``takeFire()`` takes the closure out).
    final var isCancelled: Bool { fireClosure == nil }

    /// With the lock held, when it is cancelled: the closure, taken out for good (the caller
    /// releases it outside the lock).
    final func takeFire() -> TimerFire? {
        defer { fireClosure = nil }
        return fireClosure.map(TimerFire.init)
    }

    /// With the lock held: the closure, unless cancelled.
    final func peekFire() -> TimerFire? {
        fireClosure.map(TimerFire.init)
    }
}

/// A timer's closure as a lock's critical section returns it. A struct, not the closure itself: a
/// function type returned through `withLock`'s generic result is wrapped in a reabstraction thunk,
/// an allocation per cancelled or fired timer (AllocationCheck `request-deadline`).
struct TimerFire {
    let run: @Sendable () -> Void
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
