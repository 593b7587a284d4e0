import FutureLibConcurrencyHelpers

/// Process-wide, opt-in hooks for diagnostics in development: log what went wrong where nobody
/// was looking.
///
/// ```swift
/// FutureDiagnostics.onBrokenPromise = { broken in
///     print("warning: \(broken)")  // "a Promise<Int> created at MyApp/Loader.swift:42 was dropped unresolved"
/// }
/// ```
///
/// ### Cost
/// Nothing when no hook is set, and nothing on any path but the one it reports: the hook is read
/// (under a lock) only when a promise is deallocated unresolved, which already allocates its
/// error.
///
/// ### Failures nobody observed
/// Not reported: telling that no one ever read a failure would need a flag written by every
/// continuation and read by every future's `deinit`, a cost on every path for every user. A
/// broken promise is the case that loses a result for certain.
public enum FutureDiagnostics: Sendable {
    /// A promise deallocated without being resolved: what ``FutureDiagnostics/onBrokenPromise``
    /// receives.
    ///
    /// ```swift
    /// FutureDiagnostics.onBrokenPromise = { broken in
    ///     if let site = broken.site { print("dropped at \(site.fileID):\(site.line)") }
    /// }
    /// ```
    public struct BrokenPromise: Sendable, CustomStringConvertible {
        /// Where the promise was created (nil when unknown).
        public let site: CreationSite?
        /// The promise's value type, as `String(describing:)` spells it.
        public let valueType: String

        /// `a Promise<Int> created at MyApp/Loader.swift:42 was dropped unresolved`.
        ///
        /// ```swift
        /// FutureDiagnostics.onBrokenPromise = { print($0.description) }
        /// ```
        public var description: String {
            "a Promise<\(valueType)> created at \(site.map { "\($0)" } ?? "an unknown site") was dropped unresolved"
        }
    }

    /// Called once for every promise deallocated without being resolved, after its future has
    /// failed with ``FutureError/brokenPromise(createdAt:)``; nil (the default) reports nothing.
    ///
    /// Set it once, early (at startup, or at the start of a test run); setting it again replaces
    /// it. It runs on the thread that dropped the last reference to the promise, outside every
    /// lock of the library, after the future's continuations were dispatched: keep it short, and
    /// never block in it.
    ///
    /// ```swift
    /// FutureDiagnostics.onBrokenPromise = { broken in print("warning: \(broken)") }
    /// ```
    public static var onBrokenPromise: (@Sendable (BrokenPromise) -> Void)? {
        get { brokenPromiseHook.withLock { $0 } }
        set {
            // The hook replaced is released after the lock: its captures' `deinit`s are user code.
            let replaced = brokenPromiseHook.withLock { hook in
                let replaced = hook
                hook = newValue
                return replaced
            }
            _ = consume replaced  // a closure: `withExtendedLifetime` would allocate a thunk
        }
    }

    private static let brokenPromiseHook = Lock<(@Sendable (BrokenPromise) -> Void)?>(nil)

    /// Reports a broken promise to the hook, if one is set. Called only on the broken path.
    static func reportBrokenPromise(createdAt site: CreationSite, valueType: Any.Type) {
        guard let hook = onBrokenPromise else { return }
        hook(BrokenPromise(site: site.fileAddress == 0 ? nil : site, valueType: String(describing: valueType)))
    }
}
