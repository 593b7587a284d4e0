/// The grammar of a timeout in whole milliseconds, as the Connect protocol's `Connect-Timeout-Ms`
/// header (and Envoy's `x-envoy-…-timeout-ms` headers) write it: `1*10DIGIT`.
///
/// ```swift
/// #expect(MillisecondsTimeout.parse("1500") == .milliseconds(1_500))
/// #expect(MillisecondsTimeout.format(.milliseconds(1_500)) == "1500")
/// #expect(MillisecondsTimeout.parse("soon") == nil)
/// ```
///
/// ### Hostile values
/// Every input has a defined outcome; nothing traps, and nothing the sender meant as a bound turns
/// into "no deadline":
/// - Spaces and tabs around the digits are ignored (HTTP's optional whitespace); leading zeros too.
/// - `0` means no time is left: the deadline has passed. A negative number (`-20`) counts as zero.
/// - A number over ``maximum`` (more than 10 digits, however many, e.g. `99999999999999999999999`)
///   is clamped to it.
/// - Anything else (empty, a sign `+`, a fraction `1.5`, an exponent `1e3`, hex, a unit, inner
///   whitespace, non-ASCII digits) is not a timeout: nil, and the value is ignored.
public enum MillisecondsTimeout: Sendable {
    /// The longest timeout the grammar can say: 9,999,999,999 ms (10 digits), about 115 days.
    ///
    /// ```swift
    /// #expect(MillisecondsTimeout.parse("123456789012") == MillisecondsTimeout.maximum)
    /// ```
    public static let maximum = Duration.milliseconds(maximumMilliseconds)

    static let maximumMilliseconds: Int64 = 9_999_999_999

    /// The timeout one field value says; nil when it is not one (see "Hostile values").
    ///
    /// ```swift
    /// #expect(MillisecondsTimeout.parse(" 250 ") == .milliseconds(250))
    /// #expect(MillisecondsTimeout.parse("-5") == .zero)
    /// ```
    ///
    /// - Parameter value: One value (an element of a comma-separated list, see ``DeadlineHeader``).
    /// - Returns: From `.zero` to ``maximum``, or nil.
    public static func parse(_ value: some StringProtocol) -> Duration? {
        guard let digits = TimeoutDigits.read(value, maximum: maximumMilliseconds), digits.suffixCount == 0 else {
            return nil
        }
        return .milliseconds(digits.value)
    }

    /// The field value for `timeout`: whole milliseconds, rounded down so that the receiver never
    /// gets more time than there is; `0` for no time left (a negative timeout included); ``maximum``
    /// for a longer one.
    ///
    /// ```swift
    /// #expect(MillisecondsTimeout.format(.microseconds(2_999)) == "2")
    /// #expect(MillisecondsTimeout.format(.seconds(-1)) == "0")
    /// ```
    ///
    /// - Parameter timeout: What is left.
    /// - Returns: 1 to 10 ASCII digits.
    public static func format(_ timeout: Duration) -> String {
        guard timeout > .zero else { return "0" }
        guard timeout < maximum else { return String(maximumMilliseconds) }
        // Below the maximum, so `attoseconds` divided by 10¹⁵ fits in 10 digits, and in an `Int`, whose `String`
        // is formatted in place (an `Int128`'s goes through the generic path).
        return String(Int(timeout.attoseconds / 1_000_000_000_000_000))
    }
}
