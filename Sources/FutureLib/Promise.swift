/// The write side of a ``Future``: complete it once with a value or an error.
///
/// Hand out ``future`` and keep the promise where the result is produced, e.g. to wrap a
/// callback API:
///
/// ```swift
/// func load(_ url: URL) -> Future<Data> {
///     let promise = Promise<Data>()
///     legacyClient.get(url) { data, error in
///         if let data { promise.fulfill(data) } else { promise.reject(error ?? LoadError.empty) }
///     }
///     return promise.future
/// }
/// ```
///
/// ### Semantics
/// - The first resolution wins; later ones are ignored (the `try…` forms return `false`).
/// - A promise deallocated without being resolved fails its future with
///   ``FutureError/brokenPromise(createdAt:)``, which names the file and line that created the
///   promise: nothing waits forever on a dropped promise, and the error points at it. A promise
///   whose future was completed (resolved, or cancelled through a token) reports nothing.
/// - Continuations of the future run after the promise's internal lock is released, so resolving
///   a promise from inside a continuation is safe.
public final class Promise<Value: Sendable>: Sendable {
    /// The future this promise completes.
    ///
    /// ```swift
    /// let promise = Promise<Int>()
    /// promise.future.onSuccess { print($0) }
    /// promise.fulfill(42)
    /// ```
    public let future: Future<Value>
    // Where the promise was created, for the broken-promise error, is kept by the pending future
    // itself (in the bytes its result takes later), so that a promise is one reference.

    /// Creates a promise with a pending future.
    ///
    /// The defaults record where it is created; the broken-promise error of a dropped promise
    /// shows that site. Leave them alone, or pass your caller's `#fileID` and `#line` from a
    /// helper that creates promises for it.
    ///
    /// ```swift
    /// let promise = Promise<String>()
    /// #expect(promise.future.isCompleted == false)
    /// ```
    ///
    /// - Parameters:
    ///   - fileID: The file that creates the promise; `#fileID` by default.
    ///   - line: The line that creates the promise; `#line` by default.
    @inlinable
    public init(fileID: StaticString = #fileID, line: UInt = #line) {
        future = Future(createdAt: CreationSite(fileID: fileID, line: line))
    }

    deinit {
        // Checked first: boxing the error costs an allocation, and almost every promise was resolved.
        // (`deinit` is never specialized: the atomic keeps this path free of generic metadata lookups.)
        if !future.isCompleted {
            future.breakPromise()
        }
    }

    /// Completes the future with `value`, unless it is already complete.
    ///
    /// ```swift
    /// promise.fulfill(response)
    /// ```
    ///
    /// - Parameter value: The value.
    @inlinable
    public func fulfill(_ value: Value) {
        future.complete(with: .success(value))
    }

    /// Fails the future with `error`, unless it is already complete.
    ///
    /// ```swift
    /// promise.reject(CancellationError())
    /// ```
    ///
    /// - Parameter error: The error.
    @inlinable
    public func reject(_ error: any Error) {
        future.complete(with: .failure(error))
    }

    /// Completes the future with `result`, unless it is already complete.
    ///
    /// ```swift
    /// promise.resolve(Result { try decode(data) })
    /// ```
    ///
    /// - Parameter result: The result.
    @inlinable
    public func resolve(_ result: Result<Value, any Error>) {
        future.complete(with: result)
    }

    /// Completes the future with the result of `other` once that completes.
    ///
    /// The promise stays alive (and is not broken) while `other` is pending. Resolving a promise
    /// with its own future does nothing: that future could never complete, and the promise,
    /// held by it, could never break.
    ///
    /// ```swift
    /// promise.resolve(with: cache.lookup(key))
    /// ```
    ///
    /// - Parameter other: The future whose result to forward.
    @inlinable
    public func resolve(with other: Future<Value>) {
        guard other !== future else { return }
        other.observe(on: .synchronous, cancellationToken: .none, .result { [self] in resolve($0) })
    }

    /// Completes the future with `value`; `false` if it was already complete.
    ///
    /// ```swift
    /// if !promise.tryFulfill(value) { log("late value dropped") }
    /// ```
    ///
    /// - Parameter value: The value.
    /// - Returns: Whether this call completed the future.
    @discardableResult
    @inlinable
    public func tryFulfill(_ value: Value) -> Bool {
        future.complete(with: .success(value))
    }

    /// Fails the future with `error`; `false` if it was already complete.
    ///
    /// ```swift
    /// let timedOut = promise.tryReject(FutureError.timeout)
    /// ```
    ///
    /// - Parameter error: The error.
    /// - Returns: Whether this call completed the future.
    @discardableResult
    @inlinable
    public func tryReject(_ error: any Error) -> Bool {
        future.complete(with: .failure(error))
    }

    /// Completes the future with `result`; `false` if it was already complete.
    ///
    /// ```swift
    /// let won = promise.tryResolve(.success("cached"))
    /// ```
    ///
    /// - Parameter result: The result.
    /// - Returns: Whether this call completed the future.
    @discardableResult
    @inlinable
    public func tryResolve(_ result: Result<Value, any Error>) -> Bool {
        future.complete(with: result)
    }
}

extension Promise where Value == Void {
    /// Completes the future, unless it is already complete: ``fulfill(_:)`` with `()`, for a
    /// promise that signals an event rather than carrying a value.
    ///
    /// ```swift
    /// let started = Promise<Void>()
    /// DispatchQueue.global().async { started.fulfill() }
    /// try started.future.value()
    /// ```
    @inlinable
    public func fulfill() {
        fulfill(())
    }
}
