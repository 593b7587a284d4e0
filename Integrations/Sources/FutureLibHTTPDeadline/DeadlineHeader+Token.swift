public import Cancellation

extension DeadlineHeader {
    /// The field value a client sends for work that `cancellationToken` bounds and that must also end
    /// within `timeout`: what is left of the token's deadline, or `timeout` when that is earlier or
    /// the token has none; nil when neither bounds it.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let request = CancellationRequest(cancelAfter: .seconds(2), clock: clock)
    /// clock.advance(by: .milliseconds(500))
    /// let header = DeadlineHeader.connectTimeout
    /// #expect(header.fieldValue(for: request.token, timeout: .seconds(30)) == "1500")
    /// #expect(header.fieldValue(for: request.token, timeout: .seconds(1)) == "1000")
    /// #expect(header.fieldValue(for: .none, timeout: nil) == nil)
    /// ```
    ///
    /// A cancelled token has no time left: `0`, never "no deadline".
    ///
    /// - Parameters:
    ///   - cancellationToken: The token whose ``Cancellation/CancellationToken/timeRemaining`` bounds the work.
    ///   - timeout: Another bound (a client's own timeout), if any.
    /// - Returns: The value to send, or nil for no header.
    public func fieldValue(for cancellationToken: CancellationToken, timeout: Duration?) -> String? {
        // Optionals compared directly, not through an array: this runs for every request the client adapter sends.
        switch (cancellationToken.timeRemaining, timeout) {
        case (let remaining?, let timeout?): fieldValue(for: min(remaining, timeout))
        case (let bound?, nil), (nil, let bound?): fieldValue(for: bound)
        case (nil, nil): nil
        }
    }
}
