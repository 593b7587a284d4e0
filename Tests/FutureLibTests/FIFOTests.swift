import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct FIFOTests {
    @Test func `pops in append order across wrap-around and growth`() {
        var queue = FIFO<Int>()
        var expected: [Int] = []
        var popped: [Int] = []
        var next = 0
        // Interleave appends and pops so that the ring wraps before each growth.
        for round in 1...200 {
            for _ in 0..<(round % 7 + 3) {
                queue.append(next)
                expected.append(next)
                next += 1
            }
            for _ in 0..<(round % 5 + 1) {
                if let value = queue.popFirst() { popped.append(value) }
            }
        }
        while let value = queue.popFirst() { popped.append(value) }
        #expect(popped == expected)
        let drained = queue.isEmpty && queue.popFirst() == nil
        #expect(drained)
    }

    @Test func `an element is released as it is popped, while later ones stay`() {
        let counter = DeinitCounter()
        var queue = FIFO<Tracked>()
        for _ in 0..<10 { queue.append(counter.make()) }
        for popped in 1...9 {
            _ = queue.popFirst()
            let left = queue.count
            #expect(counter.deallocated == popped)
            #expect(left == 10 - popped)
        }
    }

    @Test func `dropping a queue releases what it still holds`() {
        let counter = DeinitCounter()
        do {
            var queue = FIFO<Tracked>()
            for _ in 0..<20 { queue.append(counter.make()) }  // grows past 8 and 16
            for _ in 0..<5 { _ = queue.popFirst() }
            for _ in 0..<10 { queue.append(counter.make()) }  // wraps around
            #expect(counter.deallocated == 5)
        }
        #expect(counter.deallocated == 30)
    }

    @Test func `count tracks appends and pops`() {
        var queue = FIFO<String>()
        let empty = queue.isEmpty && queue.count == 0
        #expect(empty)
        queue.append("a")
        queue.append("b")
        let two = queue.count
        #expect(two == 2)
        let first = queue.popFirst()
        #expect(first == "a")
        let one = queue.count
        #expect(one == 1)
    }

    @Test func `a drained queue gives back a large buffer`() {
        var queue = FIFO<Int>()
        for value in 0..<5000 { queue.append(value) }
        let grown = queue.capacity
        #expect(grown >= 5000)
        while queue.popFirst() != nil {}
        let released = queue.capacity
        #expect(released == 0)
        for value in 0..<100 { queue.append(value) }
        while queue.popFirst() != nil {}
        let kept = queue.capacity
        #expect(kept > 0)  // a small buffer is kept for reuse
    }

    @Test func `removeAll empties the queue and hands the elements over`() {
        let counter = DeinitCounter()
        var queue = FIFO<Tracked>()
        for _ in 0..<3 { queue.append(counter.make()) }
        do {
            let taken = queue.removeAll()
            let emptied = queue.isEmpty
            let takenCount = taken.count
            #expect(emptied)
            #expect(takenCount == 3)
            #expect(counter.deallocated == 0)
        }
        #expect(counter.deallocated == 3)
    }
}
