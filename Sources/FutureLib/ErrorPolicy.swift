/// Which errors an error handler sees: every error, or every error but `CancellationError`.
///
/// `recover`, `recoverWith`, `mapError` and `onFailure` take one (`policy:`), on futures and on
/// streams alike, with the same default. By default a cancellation is not an error to handle: it
/// passes on unchanged, as Swift's own `Task` conventions treat it, so that cancelling a chain
/// stops it instead of turning into a fallback value, an error message or a wrapped error.
///
/// ```swift
/// let request = CancellationRequest()
/// let settings = Future(value: 8080, after: .seconds(1), cancellationToken: request.token)
///     .recover { _ in 80 }                      // not for the cancellation: it stays CancellationError
/// let logged = settings.recover(policy: .allErrors) { _ in 0 }  // every error, the cancellation too
/// request.cancel()
/// ```
///
/// ### The handler's own token is another matter
/// The policy is about the error a future *fails with*. A handler's own `cancellationToken`
/// keeps its meaning whatever the policy: a combinator whose token fires first fails with
/// `CancellationError` without calling its closure, and `onFailure` whose token fires first is
/// called once with `CancellationError`.
public enum ErrorPolicy: Sendable, Hashable {
    /// Every error except `CancellationError`, which passes on unchanged (the default).
    ///
    /// ```swift
    /// let value = Future<Int>(error: CancellationError()).recover(policy: .allErrorsExceptCancellation) { _ in 0 }
    /// // still fails with CancellationError
    /// ```
    case allErrorsExceptCancellation
    /// Every error, `CancellationError` included.
    ///
    /// ```swift
    /// let value = Future<Int>(error: CancellationError()).recover(policy: .allErrors) { _ in 0 }  // 0
    /// ```
    case allErrors

    /// Whether a handler with this policy handles `error`.
    ///
    /// ```swift
    /// #expect(!ErrorPolicy.allErrorsExceptCancellation.handles(CancellationError()))
    /// #expect(ErrorPolicy.allErrors.handles(CancellationError()))
    /// ```
    ///
    /// - Parameter error: A failure.
    /// - Returns: `false` only for `CancellationError` under ``allErrorsExceptCancellation``.
    @inlinable
    public func handles(_ error: any Error) -> Bool {
        self == .allErrors || !(error is CancellationError)
    }

    /// `onFailure`'s closure under this policy: a `CancellationError` that its own token did not
    /// cause is skipped; the token's own `CancellationError` always gets through.
    @usableFromInline
    func filtering(
        _ f: @escaping @Sendable (any Error) -> Void,
        cancellationToken: CancellationToken
    ) -> @Sendable (any Error) -> Void {
        guard self == .allErrorsExceptCancellation else { return f }
        return { error in
            guard handles(error) || cancellationToken.isCancellationRequested else { return }
            f(error)
        }
    }
}
