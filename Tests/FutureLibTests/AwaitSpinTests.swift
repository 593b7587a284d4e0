import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// The watch of `await future.value()` before it suspends (`Internal/AwaitSpin.swift`).
@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct AwaitSpinTests {
    // Many tasks awaiting pending futures at once: a watch holds its cooperative thread while the
    // other tasks, ready to run, wait for it, slower than suspending at once (Internals.md has the
    // figures). So a wait watches only when no
    // other task waits in `value()`. Asserted on the decision (how often the watch polled), not on time.
    @Test func `a wait does not watch while another task already waits in value(): the thread goes to the ready tasks`()
        async throws
    {
        let promise = Promise<Int>()
        let waiter = Task { try await promise.future.value() }
        #expect(await eventually { promise.future.debugDescription.contains("1 continuation waiting") })
        // A thread of its own: no watches to skip from earlier waits, not one of FutureLib's.
        let polls = await onDedicatedThread {
            var polls = 0
            _ = AwaitSpin.watch {
                polls += 1
                return false
            }
            AwaitSpin.endWait()
            return polls
        }
        #expect(polls == 0)
        promise.fulfill(1)
        #expect(try await waiter.value == 1)
    }
}
