/// What a continuation wants: the whole result, only the value, or only the error.
enum Callback<Value: Sendable>: Sendable {
    case result(@Sendable (Result<Value, any Error>) -> Void)
    case value(@Sendable (Value) -> Void)
    case error(@Sendable (any Error) -> Void)

    /// Calls the closure if it wants this result.
    func invoke(with result: Result<Value, any Error>) {
        switch (self, result) {
        case (.result(let body), _): body(result)
        case (.value(let body), .success(let value)): body(value)
        case (.error(let body), .failure(let error)): body(error)
        case (.value, .failure), (.error, .success): break
        }
    }

    /// Whether the closure is called for a failure (a cancellation reaches it).
    var takesErrors: Bool {
        if case .value = self { return false }
        return true
    }
}

/// A continuation waiting for a future: what to call, where, and the token registration to
/// release when the future completes first.
struct Continuation<Value: Sendable>: Sendable {
    var id: UInt32
    var context: any ExecutionContext
    var callback: Callback<Value>
    var registration: CancellationRegistration?

    /// Runs the callback on its context. Never call it with a lock held.
    func dispatch(_ result: Result<Value, any Error>) {
        if context.isSynchronous {
            // The common case of combinators: no closure allocation unless nested too deeply.
            let callback = self.callback
            if Trampoline.runInline({ callback.invoke(with: result) }) { return }
            Trampoline.run { callback.invoke(with: result) }
        } else {
            let callback = self.callback
            context.execute { callback.invoke(with: result) }
        }
    }
}

/// The state of one future as a pure value; ``Future`` owns it in a `Mutex` and carries out the
/// returned actions after the lock is released.
struct FutureState<Value: Sendable> {
    private(set) var result: Result<Value, any Error>?
    /// The first continuation lives inline: most futures have exactly one.
    private var first: Continuation<Value>?
    private var more: [Continuation<Value>] = []
    private var nextID: UInt32 = 1
    /// True while a completion still hands continuations to contexts other than `.synchronous`;
    /// registrations on such contexts meanwhile queue in `more` behind them (see ``takeQueued()``),
    /// so that a serial context runs continuations in registration order.
    private var isDispatching = false

    init(result: Result<Value, any Error>? = nil) {
        self.result = result
    }

    /// The continuations a completion dispatches, in registration order (no array for one).
    struct Ready {
        var first: Continuation<Value>?
        var more: [Continuation<Value>]
        /// Whether some continuation is not on `.synchronous`; the completer then drains
        /// ``takeQueued()`` after handing those to their contexts.
        var hasAsynchronous: Bool
    }

    /// Completes the future; returns the continuations to dispatch, or nil when it was already complete.
    mutating func complete(with newResult: Result<Value, any Error>) -> Ready? {
        guard result == nil else { return nil }
        result = newResult
        isDispatching = first.map { !$0.context.isSynchronous } == true || more.contains { !$0.context.isSynchronous }
        defer {
            first = nil
            more = []
        }
        return Ready(first: first, more: more, hasAsynchronous: isDispatching)
    }

    /// The continuations registered while the completer was dispatching, to dispatch next in
    /// registration order; nil when there are none, and then dispatching is over.
    mutating func takeQueued() -> [Continuation<Value>]? {
        guard !more.isEmpty else {
            isDispatching = false
            return nil
        }
        defer { more = [] }
        return more
    }

    enum AddAction {
        /// Stored under this id; it runs when the future completes.
        case stored(UInt32)
        /// Already complete: dispatch now with this result.
        case dispatch(Result<Value, any Error>)
        /// Already complete, but the completer is still handing earlier continuations to their
        /// contexts: it dispatches this one after them.
        case queued
    }

    mutating func add(context: any ExecutionContext, callback: Callback<Value>) -> AddAction {
        if let result {
            guard isDispatching, !context.isSynchronous else { return .dispatch(result) }
            more.append(Continuation(id: 0, context: context, callback: callback, registration: nil))
            return .queued
        }
        let id = nextID
        nextID &+= 1
        if nextID == 0 { nextID = 1 }
        let continuation = Continuation(id: id, context: context, callback: callback, registration: nil)
        if first == nil, more.isEmpty {
            first = continuation
        } else {
            more.append(continuation)
        }
        return .stored(id)
    }

    /// Attaches the token registration to a stored continuation; false if it is gone already
    /// (completed or cancelled meanwhile), and then the caller unregisters it.
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
    mutating func remove(_ id: UInt32) -> Continuation<Value>? {
        if first?.id == id {
            defer { first = nil }
            return first
        }
        guard let index = more.firstIndex(where: { $0.id == id }) else { return nil }
        return more.remove(at: index)
    }
}
