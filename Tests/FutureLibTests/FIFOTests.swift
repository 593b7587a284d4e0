import FutureLib
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(1)))
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
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
    }

    @Test func `an element is released as it is popped, while later ones stay`() {
        let counter = DeinitCounter()
        var queue = FIFO<Tracked>()
        for _ in 0..<10 { queue.append(counter.make()) }
        for popped in 1...9 {
            _ = queue.popFirst()
            #expect(counter.deallocated == popped)
            #expect(queue.count == 10 - popped)
        }
    }

    @Test func `count tracks appends and pops`() {
        var queue = FIFO<String>()
        #expect(queue.isEmpty && queue.count == 0)
        queue.append("a")
        queue.append("b")
        #expect(queue.count == 2)
        #expect(queue.popFirst() == "a")
        #expect(queue.count == 1)
    }

    @Test func `a drained queue gives back a large buffer`() {
        var queue = FIFO<Int>()
        for value in 0..<5000 { queue.append(value) }
        #expect(queue.capacity >= 5000)
        while queue.popFirst() != nil {}
        #expect(queue.capacity == 0)
        for value in 0..<100 { queue.append(value) }
        while queue.popFirst() != nil {}
        #expect(queue.capacity > 0)  // a small buffer is kept for reuse
    }

    @Test func `removeAll empties the queue and hands the elements over`() {
        let counter = DeinitCounter()
        var queue = FIFO<Tracked>()
        for _ in 0..<3 { queue.append(counter.make()) }
        var taken = queue.removeAll()
        #expect(queue.isEmpty)
        #expect(taken.count == 3)
        #expect(counter.deallocated == 0)
        taken = FIFO()
        #expect(counter.deallocated == 3)
    }
}
