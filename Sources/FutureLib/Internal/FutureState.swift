public import Dispatch  // public: the pending state names a `DispatchQueue`, read by inlinable code

/// The state of one future as a pure value; ``Future`` owns it in a `Mutex` and carries out the
/// returned actions after the lock is released.
@usableFromInline
struct FutureState<Value: Sendable>: Sendable {
    // `outcome` takes 17 bytes (24 with padding) and `waiting` 24, so that the state of a
    // `Future<Int>` is 48 bytes and the future 72: malloc's 80-byte chunk (scenario 13; it was 57
    // and 81, a 96-byte chunk, with the first continuation and the array side by side).
    //
    // Every stored property has the same layout whatever `Value` is (the value itself is a
    // ``StoredValue``), so that the never-specialized `Future.deinit` destroys the state without a
    // generic metadata lookup (330 instructions per future; scenario 2, see ``StoredValue``).
    @usableFromInline var outcome: Outcome
    /// The continuations waiting for the result (or, while the completer is dispatching, queued
    /// behind it), in registration order.
    @usableFromInline var waiting: Waiting = .none

    /// Continuations in registration order: most futures have exactly one, which needs no array.
    /// As large as one ``Continuation``, 24 bytes: the case lives in the continuation's spare bits.
    @usableFromInline
    enum Waiting: Sendable {
        case none
        case one(Continuation<Value>)
        case many([Continuation<Value>])

        /// How many there are.
        @inlinable
        var count: Int {
            switch self {
            case .none: 0
            case .one: 1
            case .many(let continuations): continuations.count
            }
        }

        /// Adds `continuation` after the others.
        @inlinable
        mutating func append(_ continuation: Continuation<Value>) {
            switch self {
            case .none:
                self = .one(continuation)
            case .one(let first):
                self = .many([first, continuation])
            case .many(var continuations):
                self = .none  // so that the array is uniquely referenced and grows in place
                continuations.append(continuation)
                self = .many(continuations)
            }
        }

        /// All of them, in order, as an array (the completer's queued ones).
        @inlinable
        var array: [Continuation<Value>] {
            switch self {
            case .none: []
            case .one(let continuation): [continuation]
            case .many(let continuations): continuations
            }
        }
    }

    /// Not nested in this generic type: a non-generic enum is what lets the never-specialized
    /// `Future.deinit` read it without a generic metadata lookup (see ``StoredValue``).
    @usableFromInline typealias Outcome = FutureOutcome

    @inlinable
    init(_ outcome: Outcome) {
        self.outcome = outcome
    }

    /// The result, or nil while pending.
    @inlinable
    var result: Result<Value, any Error>? {
        switch outcome {
        case .pending, .queued: nil
        case .succeeded(let value): .success(value.value(as: Value.self))
        case .failed(let error): .failure(error)
        }
    }

    /// The queue whose work completes this pending future, if it is known; nil once it has a result.
    @inlinable
    var completingQueue: DispatchQueue? {
        if case .queued(let queue) = outcome { return queue }
        return nil
    }

    /// Where the promise of a pending future was created; nil once it has a result.
    @inlinable
    var pendingSite: CreationSite? {
        if case .pending(let site) = outcome { return site }
        return nil
    }

    /// The continuations a completion dispatches, in registration order (no array for one).
    @usableFromInline
    struct Ready: Sendable {
        @usableFromInline var first: Continuation<Value>?
        @usableFromInline var more: [Continuation<Value>]
        /// Whether some continuation is not on `.synchronous`; the completer then ends its
        /// dispatching (``CompletionPhase/endDispatching()``) after handing those to their
        /// contexts, and dispatches what ``takeQueued(phase:)`` gives it meanwhile.
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
    mutating func complete(with newResult: Result<Value, any Error>, phase: borrowing CompletionPhase) -> Ready? {
        switch outcome {
        case .pending, .queued: break
        case .succeeded, .failed: return nil
        }
        // Moved out, not copied: a continuation holds several references.
        var taken = Waiting.none
        swap(&taken, &waiting)
        var first: Continuation<Value>? = nil
        var more: [Continuation<Value>] = []
        switch consume taken {
        case .none: break
        case .one(let continuation): first = continuation
        case .many(let continuations): more = continuations
        }
        let hasAsynchronous = first.map { !$0.isSynchronous } == true || more.contains { !$0.isSynchronous }
        outcome = Outcome(newResult)
        phase.complete(dispatching: hasAsynchronous)
        return Ready(first: first, more: more, hasAsynchronous: hasAsynchronous)
    }

    /// The continuations registered while the completer was dispatching (``CompletionPhase/queued``),
    /// to dispatch next in registration order; the completer then tries to end dispatching again.
    @inlinable
    mutating func takeQueued(phase: borrowing CompletionPhase) -> [Continuation<Value>] {
        var queued = Waiting.none
        swap(&queued, &waiting)
        phase.resumeDispatching()
        return queued.array
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

    /// Stores a continuation on a pending future. On a complete one, a continuation on a context
    /// other than `.synchronous` queues behind the completer while it is still dispatching (so a
    /// serial context sees registration order); any other is dispatched by the caller.
    @inlinable
    mutating func add(
        target: ContinuationTarget,
        callback: Callback<Value>,
        phase: borrowing CompletionPhase
    ) -> AddAction {
        switch outcome {
        case .pending, .queued:
            break
        case .succeeded, .failed:
            guard !target.isSynchronous, phase.joinDispatching() else { return .dispatch(result!) }
            waiting.append(Continuation(target: target, callback: callback))
            return .queued
        }
        waiting.append(Continuation(target: target, callback: callback))
        return .stored
    }

    /// Removes the pending continuation that `cancellable` belongs to (its token was cancelled);
    /// nil if it already ran.
    @inlinable
    mutating func remove(_ cancellable: CancellableCallback<Value>) -> Continuation<Value>? {
        switch waiting {
        case .none:
            return nil
        case .one(let continuation):
            guard continuation.uses(cancellable) else { return nil }
            waiting = .none
            return continuation
        case .many(var continuations):
            guard let index = continuations.firstIndex(where: { $0.uses(cancellable) }) else { return nil }
            waiting = .none  // so that the array is uniquely referenced
            let removed = continuations.remove(at: index)
            waiting = .many(continuations)
            return removed
        }
    }
}

/// Whether the future has a result. (Whether its completer is still dispatching is in the
/// future's ``CompletionPhase``, which the completer ends without the lock.)
@usableFromInline
enum FutureOutcome: Sendable {
    /// No result yet. The site of the promise that completes it (for the broken-promise
    /// error) is kept here, in the bytes the result takes later, rather than in the promise.
    case pending(createdAt: CreationSite)
    /// No result yet, and the work that completes it is queued (or will be) on this queue: a
    /// combinator's closure given `on: queue`, or `Future(on: queue)`'s work. Read only by the
    /// blocking `value()`, to refuse blocking the main queue on work that needs it.
    case queued(on: DispatchQueue)
    /// The result is a success with this `Value`. While the completer still hands
    /// continuations to contexts other than `.synchronous`, registrations on such contexts
    /// queue in `waiting` behind them (see ``FutureState/add(target:callback:phase:)``), so that a serial
    /// context runs continuations in registration order.
    case succeeded(StoredValue)
    /// The result is this failure; as `succeeded` otherwise.
    case failed(any Error)

    @inlinable
    init<Value: Sendable>(_ result: Result<Value, any Error>) {
        switch result {
        case .success(let value): self = .succeeded(StoredValue(value))
        case .failure(let error): self = .failed(error)
        }
    }
}
