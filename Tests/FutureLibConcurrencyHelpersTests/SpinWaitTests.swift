import Dispatch
import FutureLibConcurrencyHelpers
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a waiter for a spin lock (a future's `RawLock`, a stripe's `SpinLock`) spends its attempts
/// (`FutureLibConcurrencyHelpers/SpinWait.swift`). Asserted on the policy, not on time.
@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct SpinWaitTests {
    @Test func `a waiter spins, then yields its processor, then sleeps`() {
        #expect(SpinWait.step(after: 1, realTime: false) == .spin)
        #expect(SpinWait.step(after: SpinWait.spins - 1, realTime: false) == .spin)
        #expect(SpinWait.step(after: SpinWait.spins, realTime: false) == .yield)
        #expect(SpinWait.step(after: SpinWait.yields, realTime: false) == .yield)
        #expect(SpinWait.step(after: SpinWait.yields + 1, realTime: false) == .sleep)
    }

    // A real-time waiter's yield never lets a lower-priority holder that it preempted run, so its
    // yields only delay the sleep that lets the holder finish (Internals.md has the figures).
    @Test func `a real-time waiter sleeps as soon as its spins are done, and never yields`() {
        #expect(SpinWait.step(after: SpinWait.spins - 1, realTime: true) == .spin)
        #expect(SpinWait.step(after: SpinWait.spins, realTime: true) == .sleep)
        #expect(SpinWait.step(after: SpinWait.yields, realTime: true) == .sleep)
    }

    @Test func `a thread is seen as real-time under SCHED_FIFO, and not under the default policy`() async {
        #expect(!SpinWait.isRealTime)
        #if canImport(Glibc) || canImport(Darwin)
        let seen = await onDedicatedThread { () -> Bool? in
            var parameters = sched_param()
            parameters.sched_priority = sched_get_priority_min(SCHED_FIFO)
            // Not permitted without the privilege (an unprivileged CI runner): nothing to check then.
            guard pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0 else { return nil }
            return SpinWait.isRealTime
        }
        if let seen { #expect(seen) }
        #endif
    }
}
