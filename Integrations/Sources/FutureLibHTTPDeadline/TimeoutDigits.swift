/// What the two timeout grammars (``MillisecondsTimeout``, ``GRPCTimeout``) share: a field value's
/// optional whitespace, an optional minus sign and a run of ASCII digits, read into a number clamped
/// to a maximum however many digits there are. Standard library only, so that the fuzz target
/// (`make fuzz-deadline-header`) compiles these files alone.
struct TimeoutDigits {
    /// The number the digits spell, at most the maximum given to ``read(_:maximum:)``; 0 when negative.
    var value: Int64
    /// How many bytes follow the digits before the trailing whitespace (a unit, or garbage).
    var suffixCount: Int
    /// The first of them, if any.
    var suffixFirst: UInt8?

    /// Reads `[OWS] ["-"] 1*DIGIT suffix [OWS]`, where OWS is spaces and horizontal tabs (HTTP's
    /// optional whitespace); nil without a digit. A negative number counts as zero, and a number over
    /// `maximum`, however long, as `maximum`: one pass over the bytes, no arithmetic that can overflow.
    /// It reads a string's own bytes where it can, with no copy (a header is read on every request).
    static func read(_ text: some StringProtocol, maximum: Int64) -> TimeoutDigits? {
        if let digits = text.utf8.withContiguousStorageIfAvailable({ read(bytes: $0, maximum: maximum) }) {
            return digits
        }
        return Array(text.utf8).withUnsafeBufferPointer { read(bytes: $0, maximum: maximum) }
    }

    private static func read(bytes: UnsafeBufferPointer<UInt8>, maximum: Int64) -> TimeoutDigits? {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isWhitespace(bytes[start]) { start += 1 }
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        var index = start
        let isNegative = index < end && bytes[index] == UInt8(ascii: "-")
        if isNegative { index += 1 }
        let digitsStart = index
        var value: Int64 = 0
        while index < end, let digit = digit(bytes[index]) {
            // Saturates at `maximum` (below Int64.max / 10), so the next step cannot overflow.
            value = min(maximum, value * 10 + digit)
            index += 1
        }
        guard index > digitsStart else { return nil }
        return TimeoutDigits(
            value: isNegative ? 0 : value,
            suffixCount: end - index,
            suffixFirst: index < end ? bytes[index] : nil
        )
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func digit(_ byte: UInt8) -> Int64? {
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        return Int64(byte - UInt8(ascii: "0"))
    }
}
