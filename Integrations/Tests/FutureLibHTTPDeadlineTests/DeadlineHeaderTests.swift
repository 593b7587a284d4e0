import Cancellation
import FutureLibHTTPDeadline
import Testing

/// The outcome of every kind of hostile value, one by one, as the documentation of `MillisecondsTimeout`,
/// `GRPCTimeout` and `DeadlineHeader` states it.
@Suite struct DeadlineHeaderTests {
    static let milliseconds: [(String, Duration?)] = [
        ("1500", .milliseconds(1_500)),
        (" \t250 \t", .milliseconds(250)),  // optional whitespace around: ignored
        ("000042", .milliseconds(42)),  // leading zeros
        ("0", .zero),  // no time left
        ("-20", .zero),  // negative counts as zero
        ("-0", .zero),
        ("9999999999", MillisecondsTimeout.maximum),
        ("10000000000", MillisecondsTimeout.maximum),  // 11 digits: clamped
        (String(repeating: "9", count: 400), MillisecondsTimeout.maximum),  // overflowing: clamped
        ("", nil), ("   ", nil), ("-", nil), ("+5", nil), ("1.5", nil), ("1e3", nil), ("0x10", nil), ("15 00", nil),
        ("100ms", nil), ("abc", nil), ("١٢٣", nil),  // non-ASCII digits
        ("5\n", nil),
    ]

    @Test(arguments: milliseconds)
    func `Connect-Timeout-Ms: each hostile value has its documented outcome`(_ value: String, _ expected: Duration?) {
        #expect(MillisecondsTimeout.parse(value) == expected)
    }

    static let grpc: [(String, Duration?)] = [
        ("100m", .milliseconds(100)), ("5S", .seconds(5)), ("2M", .seconds(120)), ("1H", .seconds(3_600)),
        ("7u", .microseconds(7)), ("9n", .nanoseconds(9)), (" 3S ", .seconds(3)),
        ("0n", .zero), ("-5m", .zero),
        ("123456789S", .seconds(99_999_999)),  // 9 digits: clamped to 99,999,999 of its unit
        (String(repeating: "7", count: 500) + "H", .seconds(99_999_999 * 3_600)),
        ("5", nil), ("m", nil), ("5s", nil), ("5 S", nil), ("5Sm", nil), ("", nil), ("1.5S", nil),
    ]

    @Test(arguments: grpc)
    func `grpc-timeout: each hostile value has its documented outcome`(_ value: String, _ expected: Duration?) {
        #expect(GRPCTimeout.parse(value) == expected)
    }

    @Test func `a repeated header or a list gives the smallest valid value, and nil only when none is valid`() {
        let header = DeadlineHeader.connectTimeout
        #expect(header.timeout(in: ["800", "1200"]) == .milliseconds(800))
        #expect(header.timeout(in: ["5000, 300", "abc"]) == .milliseconds(300))
        #expect(header.timeout(in: ["abc", "99999999999999"]) == MillisecondsTimeout.maximum)
        #expect(header.timeout(in: ["1200", "0"]) == .zero)  // a zero wins: the caller has no time left
        #expect(header.timeout(in: ["abc", ",", ""]) == nil)
        #expect(header.timeout(in: [String]()) == nil)
        #expect(DeadlineHeader.grpcTimeout.timeout(in: ["1S", "20m"]) == .milliseconds(20))
    }

    @Test func `formatting rounds down, says zero for no time left, and clamps`() {
        #expect(MillisecondsTimeout.format(.microseconds(2_999)) == "2")
        #expect(MillisecondsTimeout.format(.zero) == "0")
        #expect(MillisecondsTimeout.format(.seconds(-3)) == "0")
        #expect(MillisecondsTimeout.format(.seconds(Int64.max)) == "9999999999")
        #expect(MillisecondsTimeout.format(Duration(attoseconds: .max)) == "9999999999")
        #expect(GRPCTimeout.format(.nanoseconds(9_999_999)) == "9999999n")
        #expect(GRPCTimeout.format(.nanoseconds(10_000_000)) == "10000u")
        #expect(GRPCTimeout.format(.nanoseconds(99_999_999)) == "99999u")
        #expect(GRPCTimeout.format(.seconds(30)) == "30000m")
        #expect(GRPCTimeout.format(.seconds(200_000)) == "200000S")
        #expect(GRPCTimeout.format(.seconds(200_000_000)) == "3333333M")
        #expect(GRPCTimeout.format(Duration(attoseconds: .max)) == "9999999H")
        #expect(GRPCTimeout.format(Duration(attoseconds: .min)) == "0n")
    }

    @Test func `a token's time left, bounded by a timeout; a cancelled token sends zero, never nothing`() {
        let clock = ManualClock()
        let request = CancellationRequest(cancelAfter: .seconds(2), clock: clock)
        clock.advance(by: .milliseconds(500))
        let header = DeadlineHeader.connectTimeout
        #expect(header.fieldValue(for: request.token, timeout: .seconds(30)) == "1500")
        #expect(header.fieldValue(for: request.token, timeout: .seconds(1)) == "1000")
        #expect(header.fieldValue(for: request.token, timeout: nil) == "1500")
        #expect(header.fieldValue(for: .none, timeout: .seconds(3)) == "3000")
        #expect(header.fieldValue(for: .none, timeout: nil) == nil)
        request.cancel()
        #expect(header.fieldValue(for: request.token, timeout: .seconds(30)) == "0")
        #expect(DeadlineHeader.grpcTimeout.fieldValue(for: .cancelled, timeout: nil) == "0n")
    }

    @Test func `grpc-timeout takes the hostile values Connect-Timeout-Ms does: a plus sign, -0, non-ASCII digits`() {
        #expect(GRPCTimeout.parse("+5S") == nil)
        #expect(GRPCTimeout.parse("-0S") == .zero)
        #expect(GRPCTimeout.parse("٣S") == nil)
        #expect(GRPCTimeout.parse("0000000000005m") == .milliseconds(5))  // leading zeros beyond 8 digits
        #expect(GRPCTimeout.parse("5S\n") == nil)
    }

    @Test func `one attosecond either side of zero formats as no time left: rounded down, never up`() {
        for duration in [Duration(attoseconds: 1), Duration(attoseconds: -1)] {
            #expect(MillisecondsTimeout.format(duration) == "0")
            #expect(GRPCTimeout.format(duration) == "0n")
            #expect(DeadlineHeader.connectTimeout.fieldValue(for: .none, timeout: duration) == "0")
        }
        #expect(MillisecondsTimeout.format(.milliseconds(1) - Duration(attoseconds: 1)) == "0")
        #expect(GRPCTimeout.format(.nanoseconds(1) + Duration(attoseconds: 1)) == "1n")
    }
}
