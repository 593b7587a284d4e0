/// The failures that FutureLib itself reports. Cancellation is reported with the standard
/// library's `CancellationError` instead, as Swift tasks do.
///
/// ```swift
/// do {
///     let user = try future.value(timeout: .seconds(2))
/// } catch FutureError.timeout {
///     print("still loading")
/// }
/// ```
public enum FutureError: Error, Equatable {
    /// There is no value: `filter` rejected it, `firstCompleted()` had no futures, or a wrapped
    /// callback reported neither a value nor an error.
    ///
    /// ```swift
    /// let even = Future(value: 3).filter { $0 % 2 == 0 }  // fails with .noSuchElement
    /// ```
    case noSuchElement
    /// The time limit of `value(timeout:)` or `timeout(after:)` passed first.
    ///
    /// Only the wait ended: the work behind the future goes on unless its token is cancelled.
    ///
    /// ```swift
    /// let user = try await fetchUser(id).value(timeout: .seconds(2))  // throws .timeout after 2 s
    /// ```
    case timeout
    /// The promise was deallocated without being resolved, so its future can never get a value.
    ///
    /// ```swift
    /// let future = Promise<Int>().future  // the promise is dropped at once
    /// #expect(throws: FutureError.brokenPromise) { try future.value() }
    /// ```
    case brokenPromise
}
