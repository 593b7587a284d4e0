import Cancellation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct ManualClockTests {
    /// Records, in order, which timer fired and what `now` read inside it.
    final class Firings: Sendable {
        let log = Locked<[(name: String, at: Duration)]>([])

        func record(_ name: String, on clock: ManualClock) {
            log.withLock { $0.append((name, clock.now)) }
        }

        var names: [String] { log.value.map(\.name) }
        var instants: [Duration] { log.value.map(\.at) }
    }

    // MARK: - now

    @Test func `now starts at zero and moves by exactly what advance(by:) is given`() {
        let clock = ManualClock()
        #expect(clock.now == .zero)
        clock.advance(by: .milliseconds(1500))
        #expect(clock.now == .milliseconds(1500))
        clock.advance(by: .zero)
        clock.advance(by: .seconds(-3))  // negative counts as zero
        #expect(clock.now == .milliseconds(1500))
        clock.advance(by: .nanoseconds(1))
        #expect(clock.now == .milliseconds(1500) + .nanoseconds(1))
    }

    @Test func `time stops at .seconds(Int64.max), for the settling advance as for the synchronous one`() async {
        let settling = ManualClock()
        await settling.advanceAndSettle(by: .seconds(Int64.max))
        await settling.advanceAndSettle(by: Duration(attoseconds: .max))
        #expect(settling.now == .seconds(Int64.max))
        let synchronous = ManualClock()
        synchronous.advance(by: .seconds(Int64.max))
        synchronous.advance(by: Duration(attoseconds: .max))
        #expect(synchronous.now == .seconds(Int64.max))
        // At the end of time a new deadline is due at once, and nothing remains of it.
        let request = CancellationRequest(cancelAfter: .seconds(1), clock: settling)
        #expect(request.token.timeRemaining == .zero)
        await settling.advanceAndSettle(by: .zero)
        #expect(request.isCancellationRequested)
        let now = settling.now
        #expect(now <= .seconds(Int64.max))
        if now <= .seconds(Int64.max) { #expect(now.components.seconds == Int64.max) }  // never a trap
    }

    // MARK: - Firing

    @Test func `a timer fires inside the advance that reaches its deadline, not an instant before`() {
        let clock = ManualClock()
        let firings = Firings()
        _ = clock.makeTimer(after: .seconds(30)) { firings.record("t", on: clock) }
        clock.advance(by: .seconds(30) - .nanoseconds(1))
        #expect(firings.names.isEmpty)
        clock.advance(by: .nanoseconds(1))
        #expect(firings.names == ["t"])  // before advance(by:) returned
        #expect(firings.instants == [.seconds(30)])
        clock.advance(by: .seconds(60))
        #expect(firings.names == ["t"])  // once
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `timers fire on the calling thread`() async {
        let clock = ManualClock()
        let fired = Locked<ThreadID?>(nil)
        _ = clock.makeTimer(after: .seconds(1)) { fired.withLock { $0 = .current } }
        let advancing = await onDedicatedThread { () -> ThreadID in
            clock.advance(by: .seconds(1))
            return .current
        }
        #expect(fired.value == advancing)
    }

    @Test func `timers fire in deadline order, those due at the same instant in the order they were armed`() {
        let clock = ManualClock()
        let firings = Firings()
        var timers: [any ClockTimer] = []
        for (name, seconds) in [("c", 3), ("a1", 1), ("b", 2), ("a2", 1), ("a3", 1)] {
            timers.append(clock.makeTimer(after: .seconds(seconds)) { firings.record(name, on: clock) })
        }
        clock.advance(by: .seconds(10))
        #expect(firings.names == ["a1", "a2", "a3", "b", "c"])
        #expect(firings.instants == [.seconds(1), .seconds(1), .seconds(1), .seconds(2), .seconds(3)])
        #expect(clock.now == .seconds(10))
    }

    @Test func `a re-armed timer counts as armed when it was re-armed, and fires only at its new deadline`() {
        let clock = ManualClock()
        let firings = Firings()
        let first = clock.makeTimer(after: .seconds(5)) { firings.record("first", on: clock) }
        _ = clock.makeTimer(after: .seconds(2)) { firings.record("second", on: clock) }
        first.reschedule(after: .seconds(2))  // same instant as "second", armed after it
        clock.advance(by: .seconds(5))
        #expect(firings.names == ["second", "first"])
        #expect(firings.instants == [.seconds(2), .seconds(2)])
        first.reschedule(after: .seconds(1))  // after it fired: fires again at the new deadline
        clock.advance(by: .seconds(1))
        #expect(firings.names == ["second", "first", "first"])
    }

    @Test func `a timer armed by a firing timer is due from that instant and fires in the same advance`() {
        let clock = ManualClock()
        let firings = Firings()
        let chained = Locked<(any ClockTimer)?>(nil)
        _ = clock.makeTimer(after: .seconds(1)) {
            firings.record("outer", on: clock)
            let inner = clock.makeTimer(after: .seconds(2)) { firings.record("inner", on: clock) }
            chained.withLock { $0 = inner }
        }
        clock.advance(by: .seconds(3))
        #expect(firings.names == ["outer", "inner"])
        #expect(firings.instants == [.seconds(1), .seconds(3)])
    }

    @Test func `a firing timer may cancel itself or a timer due at the same instant, which then never fires`() {
        let clock = ManualClock()
        let firings = Firings()
        let others = Locked<[any ClockTimer]>([])
        let first = Locked<(any ClockTimer)?>(nil)
        let timer = clock.makeTimer(after: .seconds(1)) {
            firings.record("first", on: clock)
            first.value?.cancel()  // itself, from inside its `fire`, as a request's timer does
            for timer in others.value { timer.cancel() }
        }
        first.withLock { $0 = timer }
        let tied = clock.makeTimer(after: .seconds(1)) { firings.record("tied", on: clock) }
        let later = clock.makeTimer(after: .seconds(2)) { firings.record("later", on: clock) }
        others.withLock { $0 = [tied, later] }
        clock.advance(by: .seconds(5))
        #expect(firings.names == ["first"])
        #expect(clock.pendingTimerCount == 0)
        first.value?.reschedule(after: .seconds(1))  // cancelled from inside `fire`: does nothing
        clock.advance(by: .seconds(5))
        #expect(firings.names == ["first"])
    }

    @Test func `advance(by:) called from a firing timer fires what it reaches, on the same thread`() {
        let clock = ManualClock()
        let firings = Firings()
        _ = clock.makeTimer(after: .seconds(2)) { firings.record("reached by the nested advance", on: clock) }
        _ = clock.makeTimer(after: .seconds(1)) {
            firings.record("outer", on: clock)
            clock.advance(by: .seconds(1))  // no deadlock: timers fire outside the clock's lock
        }
        clock.advance(by: .seconds(1))
        #expect(firings.names == ["outer", "reached by the nested advance"])
        #expect(firings.instants == [.seconds(1), .seconds(2)])
        #expect(clock.now == .seconds(2))
        #expect(clock.pendingTimerCount == 0)
    }

    @Test
    func `a request cancelled by advance(by:) may re-arm and cancel requests on the same clock from its handlers`() {
        let clock = ManualClock()
        let first = CancellationRequest(cancelAfter: .seconds(1), clock: clock)
        let tied = CancellationRequest(cancelAfter: .seconds(1), clock: clock)
        let chained = CancellationRequest()
        first.token.onCancel {
            tied.cancel()  // stops its timer, due at this very instant
            chained.cancel(after: .seconds(1), clock: clock)  // due within this advance
        }
        let tiedRuns = Counter()
        tied.token.onCancel { tiedRuns.increment() }
        clock.advance(by: .seconds(2))
        #expect(first.isCancellationRequested)
        #expect(tied.isCancellationRequested)
        #expect(tiedRuns.value == 1)
        #expect(chained.isCancellationRequested)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `a zero or negative delay is due at once: the next advance, even by zero, fires it`() {
        let clock = ManualClock()
        let firings = Firings()
        _ = clock.makeTimer(after: .zero) { firings.record("zero", on: clock) }
        _ = clock.makeTimer(after: .seconds(-1)) { firings.record("negative", on: clock) }
        #expect(firings.names.isEmpty)
        clock.advance(by: .zero)
        #expect(firings.names == ["zero", "negative"])
    }

    @Test func `a cancelled timer never fires, leaves the clock and releases its closure`() {
        let clock = ManualClock()
        let released = DeinitCounter()
        let runs = Counter()
        let timer = { [tracked = released.make()] in
            clock.makeTimer(after: .seconds(1)) {
                tracked.touch()
                runs.increment()
            }
        }()
        #expect(clock.pendingTimerCount == 1)
        timer.cancel()
        #expect(clock.pendingTimerCount == 0)
        #expect(released.deallocated == 1)
        timer.reschedule(after: .seconds(1))  // does nothing once cancelled
        clock.advance(by: .seconds(5))
        #expect(runs.value == 0)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `a clock that nobody holds is released with the timers it can no longer fire`() {
        let counter = DeinitCounter()
        var probe: WeakProbe<ManualClock>?
        var request: CancellationRequest?
        do {
            let clock = ManualClock()
            probe = WeakProbe(clock)
            let tracked = counter.make()
            _ = clock.makeTimer(after: .seconds(60)) { tracked.touch() }
            request = CancellationRequest(cancelAfter: .seconds(Int64.max), clock: clock)
            clock.advance(by: .seconds(1))
        }
        // The request holds its clock: still there, its timer pending.
        #expect(request?.isCancellationRequested == false)
        #expect(probe?.isAlive == true)
        #expect(counter.deallocated == 0)
        request = nil
        #expect(probe?.isAlive == false)  // a timer's hold on its clock kept it for good
        #expect(counter.deallocated == 1)
    }

    @Test func `a hundred thousand timers advanced in one call fire once each, in deadline order`() async {
        // Seconds of work in a debug build: on a dedicated thread, not the cooperative pool the
        // other tests need (run on it, it held one of its two threads at the start of `make test`).
        let count = Scale.hundredThousand
        let (fired, pending) = await onHeavyThread { () -> ([Int], Int) in
            let clock = ManualClock()
            let order = Locked<[Int]>([])
            // Deadlines in a scrambled order (a permutation of 0..<count, in milliseconds).
            let timers = (0..<count).map { index in
                let deadline = (index &* 7_919) % count
                return clock.makeTimer(after: .milliseconds(deadline)) { order.withLock { $0.append(deadline) } }
            }
            clock.advance(by: .milliseconds(count))
            return withExtendedLifetime(timers) { (order.value, clock.pendingTimerCount) }
        }
        #expect(fired == Array(0..<count))
        #expect(pending == 0)
    }
}

extension ManualClockTests {
    // MARK: - waitForPendingTimers

    @Test func `waitForPendingTimers returns at once when enough timers are pending`() async {
        let clock = ManualClock()
        let request = CancellationRequest(cancelAfter: .seconds(1), clock: clock)
        await clock.waitForPendingTimers()
        await clock.waitForPendingTimers(0)
        #expect(clock.pendingTimerCount == 1)
        request.cancel()
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func `waitForPendingTimers waits for the count it is given`() async {
        let clock = ManualClock()
        let returned = Counter()
        let waiter = Task {
            await clock.waitForPendingTimers(2)
            returned.increment()
        }
        let first = CancellationRequest(cancelAfter: .seconds(1), clock: clock)
        #expect(await eventually { clock.pendingTimerCount == 1 })
        try? await Task.sleep(for: .milliseconds(10))  // gives a wrong early return its chance
        #expect(returned.value == 0)
        let second = CancellationRequest(cancelAfter: .seconds(1), clock: clock)
        await waiter.value
        #expect(returned.value == 1)
        #expect(!first.isCancellationRequested && !second.isCancellationRequested)
    }

    @Test func `a cancelled waitForPendingTimers returns, and leaves nothing behind`() async {
        let clock = ManualClock()
        let waiter = Task { await clock.waitForPendingTimers() }
        waiter.cancel()
        await waiter.value
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await clock.waitForPendingTimers(5)
        }
        await late.value
        #expect(clock.pendingTimerCount == 0)
    }
}
