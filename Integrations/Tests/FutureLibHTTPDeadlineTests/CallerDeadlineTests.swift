import Cancellation
import FutureLibHTTPDeadline
import Testing

/// What the server middlewares (Hummingbird, Vapor) share: the caller's deadline read from the deadline header, and a
/// route's deadline that never goes past it; hostile header values and extreme durations included. On a `ManualClock`,
/// so that every figure is exact.
@Suite struct CallerDeadlineTests {
    @Test func `the caller's deadline is the smallest valid value from now; none valid or no header: nil`() {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        let header = DeadlineHeader.connectTimeout
        let caller = header.callerDeadline(in: ["800, 300", "abc"], clock: clock)
        #expect(caller?.instant == .seconds(5) + .milliseconds(300))
        #expect(caller?.remaining == .milliseconds(300))
        #expect(header.callerDeadline(in: ["soon", ""], clock: clock) == nil)
        #expect(header.callerDeadline(in: [String](), clock: clock) == nil)
        #expect(DeadlineHeader.grpcTimeout.callerDeadline(in: ["2S"], clock: clock)?.remaining == .seconds(2))
    }

    @Test(arguments: ["0", "-20", "-0", " 0 ", "0, 5000"])
    func `a caller with no time left cancels the request at once, with DeadlineExceededError`(_ value: String) {
        let clock = ManualClock()
        let caller = DeadlineHeader.connectTimeout.callerDeadline(in: [value], clock: clock)
        let request = CancellationRequest()
        request.cancel(after: .seconds(10), notAfter: caller)
        #expect(request.token.isCancellationRequested)
        #expect(request.token.cancellationReason is DeadlineExceededError)
    }

    @Test func `the earlier of the route's deadline and the caller's; no later deadline extends the caller's`() {
        let clock = ManualClock()
        let caller = DeadlineHeader.connectTimeout.callerDeadline(in: ["200"], clock: clock)
        let request = CancellationRequest()
        request.cancel(after: .milliseconds(100), notAfter: caller)
        #expect(request.token.timeRemaining == .milliseconds(100))
        request.cancel(after: .seconds(60), notAfter: caller)  // a route's longer deadline, set later
        #expect(request.token.timeRemaining == .milliseconds(200))
        request.cancel(after: nil, notAfter: caller)  // no route deadline: the caller's
        #expect(request.token.timeRemaining == .milliseconds(200))
        clock.advance(by: .milliseconds(150))
        request.cancel(after: .seconds(60), notAfter: caller)  // re-armed later: what the caller has left
        #expect(request.token.timeRemaining == .milliseconds(50))
        clock.advance(by: .milliseconds(50))
        #expect(request.token.cancellationReason is DeadlineExceededError)
    }

    @Test func `no caller and no route deadline: no timer; a huge caller value is clamped, never "no deadline"`() {
        let none = CancellationRequest()
        none.cancel(after: nil, notAfter: nil)
        #expect(none.token.deadline == nil)

        let clock = ManualClock()
        let huge = DeadlineHeader.connectTimeout.callerDeadline(in: [String(repeating: "9", count: 40)], clock: clock)
        let request = CancellationRequest()
        request.cancel(after: nil, notAfter: huge)
        #expect(request.token.timeRemaining == MillisecondsTimeout.maximum)
        let grpcHuge = DeadlineHeader.grpcTimeout.callerDeadline(in: ["99999999999H"], clock: clock)
        request.cancel(after: .seconds(Int64.max), notAfter: grpcHuge)
        #expect(request.token.timeRemaining == .seconds(GRPCTimeout.maximumValue * 3_600))
    }

    @Test(arguments: [
        Duration.seconds(Int64.max), .seconds(Int64.min), Duration(attoseconds: 1), Duration(attoseconds: -1), .zero,
    ])
    func `any route deadline has a meaning beside a caller's: the earlier of the two, never a trap`(_ delay: Duration) {
        let clock = ManualClock()
        let caller = DeadlineHeader.connectTimeout.callerDeadline(in: ["1000"], clock: clock)
        let request = CancellationRequest()
        request.cancel(after: delay, notAfter: caller)
        if delay <= .zero {
            #expect(request.token.cancellationReason is DeadlineExceededError)
        } else {
            #expect(request.token.timeRemaining == min(delay, .seconds(1)))
            clock.advance(by: min(delay, .seconds(1)))
            #expect(request.token.cancellationReason is DeadlineExceededError)
        }
    }

    @Test(arguments: [Duration.seconds(Int64.max), .seconds(Int64.min), Duration(attoseconds: -1)])
    func `any route deadline without a caller's runs on the system clock, never a trap`(_ delay: Duration) {
        let request = CancellationRequest()
        request.cancel(after: delay, notAfter: nil)
        if delay < .zero {
            #expect(request.token.cancellationReason is DeadlineExceededError)
        } else {
            #expect(request.token.timeRemaining.map { $0 > .seconds(1_000_000) } == true)
            request.cancel()
        }
    }
}
