import Cancellation
import TestSupport
import Testing

/// Many requests created and dropped on a long-lived source: nothing of them stays behind.
///
/// `make stress` (`--filter Scale`) runs them with a million requests and checks that the resident
/// set stays flat; `make test` runs ten thousand (fewer under a sanitizer). Nothing asserts on time.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct CancellationScaleTests {
    /// 10⁶ under `make stress`, 10⁴ in `make test`; `Scale` makes both smaller under a sanitizer.
    static let requests = Stress.override == nil ? Scale.tenThousand : Scale.million

    /// How much the resident set may grow over `requests` created and dropped, after a warm-up:
    /// a few MB, where keeping them would cost hundreds.
    static let growthLimit = 8 << 20

    /// Runs `make` `requests` times after a warm-up, dropping each result at once, and returns
    /// how much the resident set grew (nil where it cannot be read).
    private static func residentGrowth(_ make: () -> Void) -> Int? {
        for _ in 0..<Scale.tenThousand { make() }
        let before = residentBytes()
        for _ in 0..<requests { make() }
        guard let before, let after = residentBytes() else { return nil }
        return after - before
    }

    @Test func `Scale: linked requests created and dropped leave no registration on their live source`() async {
        let (registrations, growth) = await onHeavyThread { () -> (Int, Int?) in
            let shutdown = CancellationRequest()
            let growth = Self.residentGrowth {
                let linked = CancellationRequest(linkedTo: [shutdown.token])
                linked.token.onCancel { print("never runs") }  // its registration is dropped too
            }
            return (shutdown.token.registrationCount, growth)
        }
        #expect(registrations == 0)
        if Stress.override != nil, let growth {
            print("\(Self.requests) linked requests: resident set grew by \(growth / 1024) KB")
            #expect(growth < Self.growthLimit, "resident set grew by \(growth) bytes")
        }
    }

    @Test func `Scale: requests with a pending one-hour timer created and dropped leave no pending timer`() async {
        let pendingBefore = CancellationRequest.pendingTimerCount
        let growth = await onHeavyThread {
            Self.residentGrowth {
                _ = CancellationRequest(cancelAfter: .seconds(3600)).token
            }
        }
        // Other suites' timers (a few, short) may come and go meanwhile.
        #expect(
            await eventually(within: .seconds(120)) { CancellationRequest.pendingTimerCount <= pendingBefore + 100 }
        )
        if Stress.override != nil, let growth {
            print("\(Self.requests) requests with a timer: resident set grew by \(growth / 1024) KB")
            #expect(growth < Self.growthLimit, "resident set grew by \(growth) bytes")
        }
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
            await eventually(within: .seconds(120)) { CancellationRequest.pendingTimerCount <= pendingBefore + 100 }
        )
    }

    @Test func `Scale: requests with a pending one-hour timer on a manual clock, dropped, leave the clock empty`() async
    {
        let clock = ManualClock()
        let (pending, growth) = await onHeavyThread { () -> (Int, Int?) in
            let growth = Self.residentGrowth {
                _ = CancellationRequest(cancelAfter: .seconds(3600), clock: clock).token
            }
            return (clock.pendingTimerCount, growth)
        }
        #expect(pending == 0)
        if Stress.override != nil, let growth {
            print("\(Self.requests) requests with a manual-clock timer: resident set grew by \(growth / 1024) KB")
            #expect(growth < Self.growthLimit, "resident set grew by \(growth) bytes")
        }
    }
}
