/// A request header that carries a caller's remaining deadline: its name, which is configurable,
/// and its grammar.
///
/// FutureLib's HTTP adapters write and read ``connectTimeout`` (`Connect-Timeout-Ms`) unless told
/// otherwise: an AsyncHTTPClient request made with a token sends what the token has left, and a
/// Hummingbird application's request token fires when the caller's time is up.
///
/// ```swift
/// let header = DeadlineHeader.connectTimeout
/// #expect(header.fieldValue(for: .milliseconds(1_500)) == "1500")
/// #expect(header.timeout(in: ["800", "1200"]) == .milliseconds(800))  // repeated: the smallest
/// let behindEnvoy = DeadlineHeader(name: "x-envoy-expected-rq-timeout-ms")
/// #expect(behindEnvoy.timeout(in: ["250"]) == .milliseconds(250))
/// ```
///
/// ### Hostile values
/// Each value is read by its grammar (``MillisecondsTimeout``, ``GRPCTimeout``: whitespace trimmed,
/// zero and negative meaning no time left, too large clamped, anything else ignored). A header sent
/// several times, or one value holding a comma-separated list, gives the smallest valid timeout of
/// all: a caller never gets more time by repeating the header. Only when no value at all is valid is
/// there no timeout from the header.
public struct DeadlineHeader: Sendable, Hashable {
    /// How the header's value spells a timeout.
    ///
    /// ```swift
    /// let grpc = DeadlineHeader(name: "grpc-timeout", format: .grpcTimeout)
    /// ```
    public enum Format: Sendable, Hashable {
        /// Whole milliseconds, 1 to 10 digits (``MillisecondsTimeout``).
        case milliseconds
        /// gRPC's value and unit, such as `100m` (``GRPCTimeout``).
        case grpcTimeout
    }

    /// The header's name, as written on the wire (HTTP header names are case-insensitive).
    public var name: String
    /// How its value spells a timeout.
    public var format: Format

    /// A header named `name` whose value is a timeout in `format`.
    ///
    /// ```swift
    /// let header = DeadlineHeader(name: "X-Request-Timeout-Ms")
    /// ```
    ///
    /// - Parameters:
    ///   - name: The header's name.
    ///   - format: Its grammar; whole milliseconds by default.
    public init(name: String, format: Format = .milliseconds) {
        self.name = name
        self.format = format
    }

    /// `Connect-Timeout-Ms`, the Connect protocol's: what FutureLib's adapters use by default.
    ///
    /// ```swift
    /// #expect(DeadlineHeader.connectTimeout.name == "Connect-Timeout-Ms")
    /// ```
    public static var connectTimeout: DeadlineHeader {
        DeadlineHeader(name: "Connect-Timeout-Ms")
    }

    /// `grpc-timeout`, gRPC's, in its own grammar (for gRPC-Web or gRPC-aware proxies on HTTP).
    ///
    /// ```swift
    /// #expect(DeadlineHeader.grpcTimeout.fieldValue(for: .seconds(2)) == "2000000u")
    /// ```
    public static var grpcTimeout: DeadlineHeader {
        DeadlineHeader(name: "grpc-timeout", format: .grpcTimeout)
    }

    /// The field value that says `timeout`, rounded down (the receiver never gets more time than
    /// there is): ``MillisecondsTimeout/format(_:)`` or ``GRPCTimeout/format(_:)``.
    ///
    /// ```swift
    /// #expect(DeadlineHeader.connectTimeout.fieldValue(for: .seconds(3)) == "3000")
    /// ```
    ///
    /// - Parameter timeout: What is left; zero or less says no time is left.
    /// - Returns: The value to send.
    public func fieldValue(for timeout: Duration) -> String {
        switch format {
        case .milliseconds: MillisecondsTimeout.format(timeout)
        case .grpcTimeout: GRPCTimeout.format(timeout)
        }
    }

    /// The smallest valid timeout among the values of every field line of this header (each may be
    /// a comma-separated list); nil when none is valid or there is none.
    ///
    /// ```swift
    /// let header = DeadlineHeader.connectTimeout
    /// #expect(header.timeout(in: ["5000, 300", "abc"]) == .milliseconds(300))
    /// #expect(header.timeout(in: ["abc"]) == nil)
    /// ```
    ///
    /// - Parameter fieldValues: The values of the header's field lines, as received.
    /// - Returns: The smallest timeout they say, or nil.
    public func timeout(in fieldValues: some Sequence<some StringProtocol>) -> Duration? {
        var smallest: Duration?
        for fieldValue in fieldValues {
            // `split(separator: ",", omittingEmptySubsequences: false)`, without its array.
            var rest = fieldValue[...]
            while true {
                let comma = rest.firstIndex(of: ",")
                if let timeout = parse(rest[..<(comma ?? rest.endIndex)]) {
                    smallest = min(smallest ?? timeout, timeout)
                }
                guard let comma else { break }
                rest = rest[rest.index(after: comma)...]
            }
        }
        return smallest
    }

    private func parse(_ element: some StringProtocol) -> Duration? {
        switch format {
        case .milliseconds: MillisecondsTimeout.parse(element)
        case .grpcTimeout: GRPCTimeout.parse(element)
        }
    }
}
