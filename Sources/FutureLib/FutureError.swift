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
    /// There is no value: `filter` rejected it, or `firstCompleted()` had no futures.
    case noSuchElement
    /// The time limit of `value(timeout:)` or `timeout(after:)` passed first.
    case timeout
    /// The promise was deallocated without being resolved, so its future can never get a value.
    case brokenPromise
}
