/// What a continuation wants: the whole result, only the value, or only the error; or, when a
/// token can remove it early, one of those inside a ``CancellableCallback``.
@usableFromInline
enum Callback<Value: Sendable>: Sendable {
    case result(@Sendable (Result<Value, any Error>) -> Void)
    case value(@Sendable (Value) -> Void)
    case error(@Sendable (any Error) -> Void)
    case cancellable(CancellableCallback<Value>)

    /// Calls the closure if it wants this result.
    @inlinable
    func invoke(with result: Result<Value, any Error>) {
        if case .cancellable(let cancellable) = self {
            cancellable.callback.invokeClosure(with: result)
        } else {
            invokeClosure(with: result)
        }
    }

    /// ``invoke(with:)`` for the three closures. Not recursive, so that it inlines; a
    /// ``CancellableCallback`` never holds another.
    @inlinable
    func invokeClosure(with result: Result<Value, any Error>) {
        switch (self, result) {
        case (.result(let body), _): body(result)
        case (.value(let body), .success(let value)): body(value)
        case (.error(let body), .failure(let error)): body(error)
        case (.value, .failure), (.error, .success), (.cancellable, _): break
        }
    }

    /// Whether the closure is called for a failure (a cancellation reaches it).
    @inlinable
    var takesErrors: Bool {
        switch self {
        case .value: false
        case .result, .error: true
        case .cancellable(let cancellable): !cancellable.callback.isValue
        }
    }

    @inlinable
    var isValue: Bool {
        if case .value = self { return true }
        return false
    }

    /// The box a token's handler uses to remove this callback, if any.
    @inlinable
    var cancellable: CancellableCallback<Value>? {
        if case .cancellable(let cancellable) = self { return cancellable }
        return nil
    }
}

/// A callback that a token can remove before the future completes.
///
/// The token's handler holds the box (and nothing else, so the box is the handler's context) and
/// finds the continuation by the box's identity. The box holds the registration, which the future
/// releases when it completes first. The box holds the future strongly, as the handler did: a
/// token cancelled later still reaches the callback. The cycle future → continuation → box →
/// future ends when the continuation leaves the future (completion, or the token's removal).
@usableFromInline
final class CancellableCallback<Value: Sendable>: @unchecked Sendable {
    // Sendable: `callback` and `future` are constants. `registration` is written once, by
    // `FutureState.attach` with the future's lock held while the continuation is stored, and read
    // only by whoever removed the continuation from the state under that lock.
    @usableFromInline let callback: Callback<Value>
    @usableFromInline let future: Future<Value>
    @usableFromInline var registration: CancellationRegistration?

    @inlinable
    init(_ callback: Callback<Value>, of future: Future<Value>) {
        self.callback = callback
        self.future = future
    }

    /// The token's handler: removes the continuation, which then gets `CancellationError`.
    @inlinable
    func cancel() {
        if let removed = future.withState({ $0.remove(self) }) { future.cancelled(removed) }
    }
}

/// A continuation waiting for a future: what to call, and where.
@usableFromInline
struct Continuation<Value: Sendable>: Sendable {
    // The target first: the callback's tag byte then ends the struct, which keeps it at 25 bytes.
    @usableFromInline var target: ContinuationTarget
    @usableFromInline var callback: Callback<Value>

    @inlinable
    init(target: ContinuationTarget, callback: Callback<Value>) {
        self.target = target
        self.callback = callback
    }

    /// Whether `cancellable` is this continuation's box.
    @inlinable
    func uses(_ cancellable: CancellableCallback<Value>) -> Bool {
        callback.cancellable === cancellable
    }

    /// Runs the callback on its context. Never call it with a lock held.
    @inlinable
    func dispatch(_ result: Result<Value, any Error>) {
        let callback = self.callback
        if target.isSynchronous {
            // The common case of combinators: no closure allocation unless nested too deeply.
            if Trampoline.runInline({ callback.invoke(with: result) }) { return }
            Trampoline.run { callback.invoke(with: result) }
        } else {
            target.execute { callback.invoke(with: result) }
        }
    }
}
