/// The grammar of gRPC's `grpc-timeout` header: `TimeoutValue TimeoutUnit`, with `TimeoutValue =
/// 1*8DIGIT` and `TimeoutUnit` one of `H` (hours), `M` (minutes), `S` (seconds), `m` (milliseconds),
/// `u` (microseconds), `n` (nanoseconds).
///
/// ```swift
/// #expect(GRPCTimeout.parse("100m") == .milliseconds(100))
/// #expect(GRPCTimeout.format(.seconds(30)) == "30000m")
/// ```
///
/// ### Hostile values
/// As ``MillisecondsTimeout``: spaces and tabs around the value are ignored, and leading zeros;
/// `0` of any unit means no time is left, and a negative value counts as zero; a value over
/// 99,999,999 (more than 8 digits, however many) is clamped to 99,999,999 of its unit; no unit, an
/// unknown unit, or anything else is not a timeout: nil.
public enum GRPCTimeout: Sendable {
    /// The largest `TimeoutValue`: 99,999,999 (8 digits).
    ///
    /// ```swift
    /// #expect(GRPCTimeout.parse("123456789S") == .seconds(GRPCTimeout.maximumValue))
    /// ```
    public static let maximumValue: Int64 = 99_999_999

    /// The timeout one `grpc-timeout` value says; nil when it is not one (see "Hostile values").
    ///
    /// ```swift
    /// #expect(GRPCTimeout.parse("5S") == .seconds(5))
    /// #expect(GRPCTimeout.parse("5") == nil)  // no unit
    /// ```
    ///
    /// - Parameter value: The header's value.
    /// - Returns: From `.zero` to 99,999,999 hours, or nil.
    public static func parse(_ value: some StringProtocol) -> Duration? {
        guard let digits = TimeoutDigits.read(value, maximum: maximumValue), digits.suffixCount == 1 else {
            return nil
        }
        let count = digits.value
        switch digits.suffixFirst {
        case UInt8(ascii: "H"): return .seconds(count * 3_600)
        case UInt8(ascii: "M"): return .seconds(count * 60)
        case UInt8(ascii: "S"): return .seconds(count)
        case UInt8(ascii: "m"): return .milliseconds(count)
        case UInt8(ascii: "u"): return .microseconds(count)
        case UInt8(ascii: "n"): return .nanoseconds(count)
        default: return nil
        }
    }

    /// The `grpc-timeout` value for `timeout`, in the finest unit whose count fits in 7 digits,
    /// rounded down so that the receiver never gets more time than there is (as grpc-java and
    /// grpc-go write it); `0n` for no time left (a negative timeout included), `9999999H` at most.
    ///
    /// Seven digits, not the grammar's eight: grpc-swift-2 reads at most seven and ignores a longer
    /// value, so a grpc-swift-2 server would not enforce a deadline of eight (`GRPCCoreBehaviourTests`).
    /// What it costs: below 10 ms the value is exact, above it off by less than one part in 10⁴.
    ///
    /// ```swift
    /// #expect(GRPCTimeout.format(.milliseconds(250)) == "250000u")
    /// #expect(GRPCTimeout.format(.zero) == "0n")
    /// ```
    ///
    /// - Parameter timeout: What is left.
    /// - Returns: 1 to 7 ASCII digits and a unit.
    public static func format(_ timeout: Duration) -> String {
        guard timeout > .zero else { return "0n" }
        let attoseconds = timeout.attoseconds
        for (unit, size) in units {
            let count = attoseconds / size
            if count <= Int128(largestWritten) { return "\(count)\(unit)" }
        }
        return "\(largestWritten)H"
    }

    /// The largest `TimeoutValue` ``format(_:)`` writes: 9,999,999 (7 digits).
    private static let largestWritten: Int64 = 9_999_999

    /// The units, finest first, with their sizes in attoseconds.
    private static let units: [(Character, Int128)] = [
        ("n", 1_000_000_000),
        ("u", 1_000_000_000_000),
        ("m", 1_000_000_000_000_000),
        ("S", 1_000_000_000_000_000_000),
        ("M", 60_000_000_000_000_000_000),
        ("H", 3_600_000_000_000_000_000_000),
    ]
}
