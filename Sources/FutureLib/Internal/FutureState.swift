/// What a continuation wants: the whole result, only the value, or only the error.
@usableFromInline
enum Callback<Value: Sendable>: Sendable {
    case result(@Sendable (Result<Value, any Error>) -> Void)
    case value(@Sendable (Value) -> Void)
    case error(@Sendable (any Error) -> Void)

    /// Calls the closure if it wants this result.
    @inlinable
    func invoke(with result: Result<Value, any Error>) {
        switch (self, result) {
        case (.result(let body), _): body(result)
        case (.value(let body), .success(let value)): body(value)
        case (.error(let body), .failure(let error)): body(error)
        case (.value, .failure), (.error, .success): break
        }
    }

    /// Whether the closure is called for a failure (a cancellation reaches it).
    @inlinable
    var takesErrors: Bool {
        if case .value = self { return false }
        return true
    }
}

/// A continuation waiting for a future: what to call, where, and the token registration to
/// release when the future completes first.
@usableFromInline
struct Continuation<Value: Sendable>: Sendable {
    @usableFromInline var id: UInt32
    @usableFromInline var target: ContinuationTarget
    @usableFromInline var callback: Callback<Value>
    @usableFromInline var registration: CancellationRegistration?

    @inlinable
    init(id: UInt32, target: ContinuationTarget, callback: Callback<Value>, registration: CancellationRegistration?) {
        self.id = id
        self.target = target
        self.callback = callback
        self.registration = registration
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

/// The state of one future as a pure value; ``Future`` owns it in a `Mutex` and carries out the
/// returned actions after the lock is released.
@usableFromInline
struct FutureState<Value: Sendable>: Sendable {
    @usableFromInline var result: Result<Value, any Error>?
    /// The first continuation lives inline: most futures have exactly one.
    @usableFromInline var first: Continuation<Value>?
    @usableFromInline var more: [Continuation<Value>] = []
    @usableFromInline var nextID: UInt32 = 1
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
        /// Stored under this id; it runs when the future completes.
        case stored(UInt32)
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
            more.append(Continuation(id: 0, target: target, callback: callback, registration: nil))
            return .queued
        }
        let id = nextID
        nextID &+= 1
        if nextID == 0 { nextID = 1 }
        let continuation = Continuation(id: id, target: target, callback: callback, registration: nil)
        if first == nil, more.isEmpty {
            first = continuation
        } else {
            more.append(continuation)
        }
        return .stored(id)
    }

    /// Attaches the token registration to a stored continuation; false if it is gone already
    /// (completed or cancelled meanwhile), and then the caller unregisters it.
    @inlinable
    mutating func attach(_ registration: CancellationRegistration, to id: UInt32) -> Bool {
        if first?.id == id {
            first?.registration = registration
            return true
        }
        guard let index = more.firstIndex(where: { $0.id == id }) else { return false }
        more[index].registration = registration
        return true
    }

    /// Removes a pending continuation (its token was cancelled); nil if it already ran.
    @inlinable
    mutating func remove(_ id: UInt32) -> Continuation<Value>? {
        if first?.id == id {
            return first.take()
        }
        guard let index = more.firstIndex(where: { $0.id == id }) else { return nil }
        return more.remove(at: index)
    }
}
