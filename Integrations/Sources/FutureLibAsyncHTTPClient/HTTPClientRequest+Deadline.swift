public import AsyncHTTPClient
public import FutureLibHTTPDeadline
public import NIOCore
import NIOHTTP1

extension HTTPClientRequest {
    /// Writes what is left of `cancellationToken`'s deadline into `header`, bounded by `timeout`: what
    /// ``AsyncHTTPClient/HTTPClient/execute(_:timeout:upTo:logger:deadlineHeader:cancellationToken:)`` does
    /// before it sends a request, for a request sent another way.
    ///
    /// ```swift
    /// var request = HTTPClientRequest(url: "http://inventory.internal/reserve")
    /// request.setDeadline(.connectTimeout, for: token, timeout: .seconds(30))
    /// // Connect-Timeout-Ms: min(30 s, the token's time remaining), in whole milliseconds, rounded down
    /// ```
    ///
    /// ### Semantics
    /// - The value is the smallest of the token's ``Cancellation/CancellationToken/timeRemaining`` (none for a
    ///   token no timer can cancel), `timeout`, and a timeout the request's own header already says (a caller's
    ///   value is never raised); measured now. A cancelled token sends `0`: no time left.
    /// - It replaces the header's field lines with that one value.
    ///
    /// - Parameters:
    ///   - header: The header to write (its name and grammar).
    ///   - cancellationToken: The token whose deadline bounds the request.
    ///   - timeout: AsyncHTTPClient's deadline for the whole request, from now.
    public mutating func setDeadline(
        _ header: DeadlineHeader,
        for cancellationToken: CancellationToken,
        timeout: TimeAmount
    ) {
        let own = Duration.nanoseconds(timeout.nanoseconds)
        let existing = header.timeout(in: headers[header.name])
        let bound = existing.map { min($0, own) } ?? own
        guard let value = header.fieldValue(for: cancellationToken, timeout: bound) else { return }
        headers.replaceOrAdd(name: header.name, value: value)
    }
}
