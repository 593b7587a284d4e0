/// The reason a request's timer gives when it cancels the request.
///
/// ``CancellationRequest/init(cancelAfter:clock:)`` and ``CancellationRequest/cancel(after:)``
/// cancel with it, on any clock, so work can tell a deadline from any other cancellation:
///
/// ```swift
/// let request = CancellationRequest(cancelAfter: .zero)
/// #expect(request.token.cancellationReason is DeadlineExceededError)
/// ```
///
/// A request linked to a request whose deadline passed takes it too (its first cancelled source's
/// reason). Futures and streams that the token cancels still fail with `CancellationError`.
public struct DeadlineExceededError: Error, Equatable {
    /// Creates the error, for a deadline of your own or to compare with.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// request.cancel(reason: DeadlineExceededError())  // a deadline measured elsewhere
    /// ```
    public init() {}
}
