import Cancellation
import Foundation
import TestSupport
import Testing

/// Many requests created and dropped on a long-lived source: nothing of them stays behind.
///
/// `make stress` (`--filter Scale`) runs them with a million requests and checks that the resident
/// set stays flat, each shape in a process of its own (an exit test): other suites run in parallel
/// in the test process, and what they allocate would be read as growth. `make test` runs ten
/// thousand (fewer under a sanitizer) and checks the counts only. Nothing asserts on time.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(10))))
struct CancellationScaleTests {
    /// 10⁶ under `make stress`, 10⁴ in `make test`; `Scale` makes both smaller under a sanitizer.
    static let requests = Stress.override == nil ? Scale.tenThousand : Scale.million

    /// How much the resident set may grow over `requests` created and dropped, after a warm-up:
    /// a few MB, where keeping them would cost hundreds.
    static let growthLimit = 8 << 20

    /// Runs `make` `requests` times after a warm-up, dropping each result at once, and exits the
    /// process with a failure if the resident set grew by `growthLimit` or more. For an exit
    /// test's child, where nothing else runs.
    private static func exitIfResidentSetGrows(_ shape: String, _ make: () -> Void) {
        for _ in 0..<Scale.tenThousand { make() }
        let before = residentBytes()
        for _ in 0..<requests { make() }
        guard let before, let after = residentBytes() else { return }
        print("\(requests) \(shape): resident set grew by \((after - before) / 1024) KB")
        if after - before >= growthLimit { exit(1) }
    }

    /// The three shapes below, each in a process of its own, under `make stress` only.
    @Test(.enabled(if: Stress.override != nil))
    func `Scale: a million requests created and dropped keep the resident set flat`() async {
        await #expect(processExitsWith: .success) {
            let shutdown = CancellationRequest()
            CancellationScaleTests.exitIfResidentSetGrows("linked requests") {
                let linked = CancellationRequest(linkedTo: [shutdown.token])
                linked.token.onCancel { print("never runs") }  // its registration is dropped too
            }
        }
        await #expect(processExitsWith: .success) {
            CancellationScaleTests.exitIfResidentSetGrows("requests with a timer") {
                _ = CancellationRequest(cancelAfter: .seconds(3600)).token
            }
        }
        await #expect(processExitsWith: .success) {
            let clock = ManualClock()
            CancellationScaleTests.exitIfResidentSetGrows("requests with a manual-clock timer") {
                _ = CancellationRequest(cancelAfter: .seconds(3600), clock: clock).token
            }
        }
    }

    @Test func `Scale: linked requests created and dropped leave no registration on their live source`() async {
        let registrations = await onHeavyThread { () -> Int in
            let shutdown = CancellationRequest()
            for _ in 0..<Self.requests {
                let linked = CancellationRequest(linkedTo: [shutdown.token])
                linked.token.onCancel { print("never runs") }  // its registration is dropped too
            }
            return shutdown.token.registrationCount
        }
        #expect(registrations == 0)
    }

    @Test func `Scale: requests with a pending one-hour timer created and dropped leave no pending timer`() async {
        let pendingBefore = CancellationRequest.pendingTimerCount
        await onHeavyThread {
            for _ in 0..<Self.requests { _ = CancellationRequest(cancelAfter: .seconds(3600)).token }
        }
        // Other suites' timers (a few, short) may come and go meanwhile.
        #expect(
            await eventually { CancellationRequest.pendingTimerCount <= pendingBefore + 100 }
        )
    }

    @Test func `Scale: linked requests with a deadline, dropped, leave nothing on the source or the timer queue`() async
    {
        let pendingBefore = CancellationRequest.pendingTimerCount
        let registrations = await onHeavyThread { () -> Int in
            let shutdown = CancellationRequest()
            for _ in 0..<Self.requests {
                let deadline = CancellationRequest(cancelAfter: .seconds(3600))
                _ = CancellationRequest(linkedTo: [shutdown.token, deadline.token]).token
            }
            return shutdown.token.registrationCount
        }
        #expect(registrations == 0)
        #expect(
            await eventually { CancellationRequest.pendingTimerCount <= pendingBefore + 100 }
        )
    }

    @Test func `Scale: requests with a pending one-hour timer on a manual clock, dropped, leave the clock empty`() async
    {
        let clock = ManualClock()
        let pending = await onHeavyThread { () -> Int in
            for _ in 0..<Self.requests { _ = CancellationRequest(cancelAfter: .seconds(3600), clock: clock).token }
            return clock.pendingTimerCount
        }
        #expect(pending == 0)
    }
}
