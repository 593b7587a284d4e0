/// The `grpc-timeout` header's value (gRPC's HTTP/2 protocol): 1 to 8 ASCII digits and a unit, `H` `M` `S` `m`
/// `u` `n` (hours to nanoseconds). GRPCCore's own parser is internal to it.
enum GRPCTimeout {
    /// The header's name.
    static let header = "grpc-timeout"

    /// The duration `value` spells, or `nil` when it is not a well-formed value (empty, more than 8 digits, a
    /// non-digit, no unit or an unknown one): the header is then ignored, as GRPCCore ignores it.
    static func parse(_ value: some StringProtocol) -> Duration? {
        let utf8 = Array(value.utf8)
        guard let unit = utf8.last, utf8.count >= 2, utf8.count <= 9 else { return nil }
        var amount: Int64 = 0
        for byte in utf8.dropLast() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            amount = amount * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        switch unit {
        case UInt8(ascii: "H"): return .seconds(amount) * 3600
        case UInt8(ascii: "M"): return .seconds(amount) * 60
        case UInt8(ascii: "S"): return .seconds(amount)
        case UInt8(ascii: "m"): return .milliseconds(amount)
        case UInt8(ascii: "u"): return .microseconds(amount)
        case UInt8(ascii: "n"): return .nanoseconds(amount)
        default: return nil
        }
    }

    /// The value that spells `duration` (negative counts as zero), rounded up to the finest unit whose amount fits
    /// in 8 digits, so the peer never sees less time than there is.
    static func encode(_ duration: Duration) -> String {
        let nanoseconds = max(duration, .zero).nanosecondsRoundedUp
        let units: [(perUnit: Int64, symbol: String)] = [
            (1, "n"), (1_000, "u"), (1_000_000, "m"), (1_000_000_000, "S"), (60_000_000_000, "M"),
            (3_600_000_000_000, "H"),
        ]
        for (perUnit, symbol) in units {
            let amount = nanoseconds / perUnit + (nanoseconds % perUnit == 0 ? 0 : 1)
            if amount <= 99_999_999 { return "\(amount)\(symbol)" }
        }
        return "99999999H"
    }
}

extension Duration {
    /// The duration in whole nanoseconds, rounded up, saturating at `Int64.max`.
    fileprivate var nanosecondsRoundedUp: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        let fraction = attoseconds / 1_000_000_000 + (attoseconds % 1_000_000_000 == 0 ? 0 : 1)
        let (sum, overflowed) = whole.addingReportingOverflow(fraction)
        return overflowed ? .max : sum
    }
}
