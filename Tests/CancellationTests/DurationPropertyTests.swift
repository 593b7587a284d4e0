import Cancellation
import Foundation
import TestSupport
import Testing

/// Every `Duration` the `Cancellation` module takes has a meaning, however extreme
/// (Guarantees.md, "Inputs that are not valid"): properties over the whole space of durations,
/// edges first (``Arbitrary``). Each runs in a child process, so that a trap fails the test
/// instead of taking the run down.
@Suite(.timeLimit(.minutes(HangLimit.minutes(5))))
struct DurationPropertyTests {
    /// The child's standard error, where ``require(_:_:)`` says which case failed.
    private func expectSuccess(_ result: ExitTest.Result?) {
        guard let result, result.exitStatus != .exitCode(0) else { return }
        Issue.record("\(String(decoding: result.standardErrorContent, as: UTF8.self))")
    }

    @Test func `cancelAfter: and cancel(after:) on the system clock take any duration`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            stopIfStuck()
            var arbitrary = Arbitrary(seed: 1)
            for delay in arbitrary.durations(PropertyCases.count) {
                let request = CancellationRequest(cancelAfter: delay)
                let rearmed = CancellationRequest(cancelAfter: .seconds(60))
                rearmed.cancel(after: delay)
                for request in [request, rearmed] {
                    if delay <= .zero {
                        require(request.isCancellationRequested, "\(describe(delay)): not cancelled at once")
                    } else if delay >= .seconds(3600) {
                        require(!request.isCancellationRequested, "\(describe(delay)): cancelled early")
                    }
                    request.cancel()
                }
            }
        }
        expectSuccess(result)
    }

    @Test func `a system clock timer takes any delay and any new delay`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            stopIfStuck()
            var arbitrary = Arbitrary(seed: 2)
            for delay in arbitrary.durations(PropertyCases.count) {
                let fired = Locked(false)
                let timer = SystemClock().makeTimer(after: delay) { fired.withLock { $0 = true } }
                timer.reschedule(after: arbitrary.duration())
                timer.reschedule(after: delay)
                timer.cancel()
            }
        }
        expectSuccess(result)
    }

    /// A model of a manual clock: `now` is the sum of the positive advances, saturated at
    /// `.seconds(Int64.max)`; a timer or a request armed with `delay` is due at `now + delay`
    /// (saturated likewise) and fires in the first advance that reaches that instant.
    @Test func `a manual clock advances by any amount, any number of times, and fires what comes due`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let end = Duration.seconds(Int64.max).attoseconds
            func saturated(_ instant: Int128, plus delay: Duration) -> Int128 {
                let (sum, overflow) = instant.addingReportingOverflow(max(delay.attoseconds, 0))
                return overflow || sum > end ? end : sum
            }
            var arbitrary = Arbitrary(seed: 3)
            for round in 0..<max(PropertyCases.count / 4, 50) {
                let clock = ManualClock()
                var now: Int128 = 0
                var armed: [(due: Int128, fired: @Sendable () -> Bool, modelFired: Bool)] = []
                for step in 0..<16 {
                    // Small delays as often as extreme ones, so that deadlines are reached and missed.
                    let delay =
                        arbitrary.element(of: [true, false])
                        ? arbitrary.duration() : .milliseconds(Int64(arbitrary.int() % 5_000))
                    switch arbitrary.element(of: [0, 1, 2, 3]) {
                    case 0:
                        let fired = Locked(false)
                        _ = clock.makeTimer(after: delay) { fired.withLock { $0 = true } }
                        armed.append((saturated(now, plus: delay), { fired.value }, false))
                    case 1:
                        let request = CancellationRequest(cancelAfter: delay, clock: clock)
                        let token = request.token
                        armed.append((saturated(now, plus: delay), { token.isCancellationRequested }, delay <= .zero))
                        withExtendedLifetime(request) {}
                    default:
                        clock.advance(by: delay)
                        now = saturated(now, plus: delay)
                        for index in armed.indices where armed[index].due <= now { armed[index].modelFired = true }
                    }
                    let context = "round \(round), step \(step), delay \(describe(delay))"
                    require(clock.now.attoseconds == now, "\(context): now is \(describe(clock.now)), not \(now)")
                    for timer in armed {
                        require(timer.fired() == timer.modelFired, "\(context): a timer due at \(timer.due)")
                    }
                }
            }
        }
        expectSuccess(result)
    }

    @Test func `token.wait(timeout:) takes any timeout`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            Self.waitForAnyTimeout()
        }
        expectSuccess(result)
    }

    /// The body of the test above: synchronous, since it blocks (an exit test's body is async).
    private static func waitForAnyTimeout() {
        stopIfStuck()
        var arbitrary = Arbitrary(seed: 4)
        for timeout in arbitrary.durations(PropertyCases.count / 4) {
            if timeout <= .zero {
                require(!CancellationRequest().token.wait(timeout: timeout), "\(describe(timeout)): cancelled?")
            } else if timeout >= .seconds(10) {
                // Cancelled long before the timeout: a timeout mistaken for a past instant returns false.
                let request = CancellationRequest(cancelAfter: .milliseconds(1))
                require(request.token.wait(timeout: timeout), "\(describe(timeout)): timed out early")
            }
            require(CancellationToken.cancelled.wait(timeout: timeout), "\(describe(timeout)): cancelled token")
        }
    }

    @Test func `sleep(for:) takes any duration, on a manual clock and on the system clock`() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            stopIfStuck()
            var arbitrary = Arbitrary(seed: 5)
            for duration in arbitrary.durations(PropertyCases.count / 4) {
                let clock = ManualClock()
                let sleeper = Task { try await clock.sleep(for: duration) }
                await clock.waitForPendingTimers()
                clock.advance(by: duration)  // reaches the sleep's deadline, saturated or not
                let woke: Void? = try? await sleeper.value
                require(woke != nil, "\(describe(duration)): a manual sleep did not end")

                let system = Task { try await SystemClock().sleep(for: duration) }
                system.cancel()
                let outcome = await system.result
                if duration >= .seconds(3600) {
                    require((try? outcome.get()) == nil, "\(describe(duration)): a long sleep ended by itself")
                }
            }
        }
        expectSuccess(result)
    }
}
