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
///
/// ### Equality ignores where a promise was created
/// ``brokenPromise(createdAt:)`` carries the ``CreationSite`` of the dropped promise, for the
/// description only: every broken-promise error equals ``brokenPromise``, so
/// `error as? FutureError == .brokenPromise`, `#expect(throws: FutureError.brokenPromise)` and
/// `catch FutureError.brokenPromise` work whatever the site.
public enum FutureError: Error, Equatable, CustomStringConvertible {
    /// There is no value to give: the operation ended without one and without an error of its own.
    ///
    /// One case for one meaning, "nothing to give", reached in four ways, each by a different API,
    /// so the call that returned the future tells which:
    ///
    /// | Where it comes from | Why there is no value |
    /// |---|---|
    /// | `filter` | The value failed the test. |
    /// | `firstCompleted()` or `firstSuccess()` on an empty sequence | There was nothing to complete first. |
    /// | `Future.race([])` | There were no operations to race. |
    /// | `Future(method:)` / `FutureStream(method:)` with a `(Value?, Error?)` callback | The callback passed `nil` for both. |
    ///
    /// ```swift
    /// let even = Future(value: 3).filter { $0 % 2 == 0 }  // fails with .noSuchElement
    /// ```
    ///
    /// ### Telling them apart after composing
    /// Once futures from several of these are composed, the case alone no longer says which one
    /// had no value. Name it where it arises, with `mapError` right after the call:
    ///
    /// ```swift
    /// enum LookupError: Error { case notAnAdult }
    /// let adult = Future(value: 12).filter { $0 >= 18 }
    ///     .mapError { $0 as? FutureError == .noSuchElement ? LookupError.notAnAdult : $0 }
    /// ```
    ///
    /// The contract fixes this case (`FutureError.noSuchElement`), so it is not split: code that
    /// catches it keeps working whatever produced it.
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
    /// `site` is where the promise was created (nil when unknown). Match it with
    /// `catch FutureError.brokenPromise` or `case .brokenPromise(let site?)`.
    case brokenPromise(createdAt: CreationSite?)
    /// A blocking `value()` was called on the main queue for a future whose completing work is
    /// queued on the main queue, so it would wait forever. `queue` is the queue's label.
    ///
    /// See "Deadlock detection" on the blocking `value()` for what is detected.
    case deadlock(queue: String)

    /// A broken-promise error without a creation site; equal to every broken-promise error.
    ///
    /// ```swift
    /// #expect(throws: FutureError.brokenPromise) { try Promise<Int>().future.value() }
    /// ```
    public static var brokenPromise: FutureError { .brokenPromise(createdAt: nil) }

    /// Whether both are the same case; the creation site of a broken promise is not compared.
    ///
    /// ```swift
    /// #expect(FutureError.brokenPromise(createdAt: CreationSite()) == .brokenPromise)
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: An error.
    ///   - rhs: Another error.
    /// - Returns: Whether they are the same case (and, for ``deadlock(queue:)``, the same label).
    public static func == (lhs: FutureError, rhs: FutureError) -> Bool {
        switch (lhs, rhs) {
        case (.noSuchElement, .noSuchElement), (.timeout, .timeout), (.brokenPromise, .brokenPromise): true
        case (.deadlock(let left), .deadlock(let right)): left == right
        case (.noSuchElement, _), (.timeout, _), (.brokenPromise, _), (.deadlock, _): false
        }
    }

    /// What went wrong, and for a broken promise where it was created.
    ///
    /// ```swift
    /// print(FutureError.brokenPromise(createdAt: CreationSite()))
    /// // "brokenPromise: the Promise created at MyApp/Main.swift:7 was deallocated without being resolved"
    /// ```
    public var description: String {
        switch self {
        case .noSuchElement: "noSuchElement"
        case .timeout: "timeout"
        case .brokenPromise(let site?):
            "brokenPromise: the Promise created at \(site) was deallocated without being resolved"
        case .brokenPromise(nil): "brokenPromise: the Promise was deallocated without being resolved"
        case .deadlock(let queue):
            "deadlock: blocking value() called on the serial DispatchQueue '\(queue)', which the future's "
                + "completion needs; it would wait forever (use 'try await value()' or a continuation)"
        }
    }
}
