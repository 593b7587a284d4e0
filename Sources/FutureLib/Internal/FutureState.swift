/// The state of one future as a pure value; ``Future`` owns it in a `Mutex` and carries out the
/// returned actions after the lock is released.
@usableFromInline
struct FutureState<Value: Sendable>: Sendable {
    @usableFromInline var result: Result<Value, any Error>?
    /// The first continuation lives inline: most futures have exactly one.
    @usableFromInline var first: Continuation<Value>?
    @usableFromInline var more: [Continuation<Value>] = []
    /// True while a completion still hands continuations to contexts other than `.synchronous`;
    /// registrations on such contexts meanwhile queue in `more` behind them (see ``takeQueued()``),
    /// so that a serial context runs continuations in registration order.
    @usableFromInline var isDispatching = false

    @inlinable
    init(result: Result<Value, any Error>? = nil) {
        self.result = result
    }

    /// The continuations a completion dispatches, in registration order (no array for one).
    @usableFromInline
    struct Ready: Sendable {
        @usableFromInline var first: Continuation<Value>?
        @usableFromInline var more: [Continuation<Value>]
        /// Whether some continuation is not on `.synchronous`; the completer then drains
        /// ``takeQueued()`` after handing those to their contexts.
        @usableFromInline var hasAsynchronous: Bool

        @inlinable
        init(first: Continuation<Value>?, more: [Continuation<Value>], hasAsynchronous: Bool) {
            self.first = first
            self.more = more
            self.hasAsynchronous = hasAsynchronous
        }
    }

    /// Completes the future; returns the continuations to dispatch, or nil when it was already complete.
    @inlinable
    mutating func complete(with newResult: Result<Value, any Error>) -> Ready? {
        guard result == nil else { return nil }
        result = newResult
        // Moved out, not copied: a continuation holds several references.
        let first = first.take()
        var more: [Continuation<Value>] = []
        swap(&more, &self.more)
        isDispatching = first.map { !$0.target.isSynchronous } == true || more.contains { !$0.target.isSynchronous }
        return Ready(first: first, more: more, hasAsynchronous: isDispatching)
    }

    /// The continuations registered while the completer was dispatching, to dispatch next in
    /// registration order; nil when there are none, and then dispatching is over.
    @inlinable
    mutating func takeQueued() -> [Continuation<Value>]? {
        guard !more.isEmpty else {
            isDispatching = false
            return nil
        }
        var queued: [Continuation<Value>] = []
        swap(&queued, &more)
        return queued
    }

    @usableFromInline
    enum AddAction: Sendable {
        /// Stored; it runs when the future completes.
        case stored
        /// Already complete: dispatch now with this result.
        case dispatch(Result<Value, any Error>)
        /// Already complete, but the completer is still handing earlier continuations to their
        /// contexts: it dispatches this one after them.
        case queued
    }

    @inlinable
    mutating func add(target: ContinuationTarget, callback: Callback<Value>) -> AddAction {
        if let result {
            guard isDispatching, !target.isSynchronous else { return .dispatch(result) }
            more.append(Continuation(target: target, callback: callback))
            return .queued
        }
        let continuation = Continuation(target: target, callback: callback)
        if first == nil, more.isEmpty {
            first = continuation
        } else {
            more.append(continuation)
        }
        return .stored
    }

    /// Attaches the token registration to the stored continuation that `cancellable` belongs to;
    /// false if it is gone already (completed or cancelled meanwhile), and then the caller
    /// unregisters it.
    @inlinable
    mutating func attach(_ registration: CancellationRegistration, to cancellable: CancellableCallback<Value>) -> Bool {
        guard first?.uses(cancellable) == true || more.contains(where: { $0.uses(cancellable) }) else { return false }
        cancellable.registration = registration
        return true
    }

    /// Removes the pending continuation that `cancellable` belongs to (its token was cancelled);
    /// nil if it already ran.
    @inlinable
    mutating func remove(_ cancellable: CancellableCallback<Value>) -> Continuation<Value>? {
        if first?.uses(cancellable) == true {
            return first.take()
        }
        guard let index = more.firstIndex(where: { $0.uses(cancellable) }) else { return nil }
        return more.remove(at: index)
    }
}
