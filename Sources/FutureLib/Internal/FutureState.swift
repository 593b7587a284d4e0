public import Dispatch  // public: the pending state names a `DispatchQueue`, read by inlinable code

/// The state of one future as a pure value; ``Future`` owns it in a `Mutex` and carries out the
/// returned actions after the lock is released.
@usableFromInline
struct FutureState<Value: Sendable>: Sendable {
    // One enum of 32 bytes (for every `Value`): the continuations, and the site, the queue or the
    // result, overlapping, with the case in the spare bits of every payload's first word (a
    // reference). With the lock, the phase and the site's file length in the 8 bytes after the
    // object header, a future is 56 bytes: malloc's 64-byte chunk (guarded by callgrind
    // `mallinfo-futurelib`). The price, decoding the case from spare bits and rebuilding a 32-byte
    // enum, is counted in `Documentation/Internals.md` ("Layout").
    //
    // Nothing in it has a layout that depends on `Value` (the value itself is a ``StoredValue``),
    // so that the never-specialized `Future.deinit` destroys the state without a generic metadata
    // lookup (see ``StoredValue``).
    @usableFromInline var storage: Storage

    @usableFromInline
    enum Storage: Sendable {
        /// No result yet; `site` is where the promise that completes it was created (for the
        /// broken-promise error; ``PackedSite/unknown`` when no promise does).
        case pending(Waiting, site: PackedSite)
        /// As `pending`, for a site that does not pack into one word (kept in a box).
        case pendingAtBoxedSite(Waiting, site: SiteBox)
        /// No result yet, and the work that completes it is queued (or will be) on this queue: a
        /// combinator's closure given `on: queue`, or `Future(on: queue)`'s work. Read only by the
        /// blocking `value()`, to refuse blocking the main queue on work that needs it.
        case queued(Waiting, on: DispatchQueue)
        /// The result is a success with this `Value`. (The first word, copied without a retain,
        /// gives the case the spare bits that keep the state at 32 bytes.)
        case succeeded(NoContinuations, StoredValue)
        /// The result is this failure.
        case failed(any Error)
        /// As `succeeded`, while the completer still hands continuations to contexts other than
        /// `.synchronous`: registrations on such contexts queue here behind them (see
        /// ``add(_:isSynchronous:phase:)``), so that a serial context runs continuations in
        /// registration order. Rare, and kept apart so that reading a result copies no array
        /// (callgrind `futurelib-sequence`).
        ///
        /// A token removes a queued continuation by leaving nil in its place (its
        /// ``CancellableCallback/slot`` says where): O(1), and no compaction, since the completer
        /// takes the whole array at its next turn (``takeQueued(phase:)``).
        case succeededQueuing([Continuation<Value>?], StoredValue)
        /// As `failed`, with continuations queued behind the completer.
        case failedQueuing([Continuation<Value>?], any Error)
    }

    /// Continuations in registration order: most futures have exactly one, which needs no array.
    /// As large as one ``Continuation``, 24 bytes: the case lives in the continuation's spare bits.
    @usableFromInline
    enum Waiting: Sendable {
        case none
        case one(Continuation<Value>)
        case many(ContinuationSlots<Value>)

        /// How many there are.
        @inlinable
        var count: Int {
            switch self {
            case .none: 0
            case .one: 1
            case .many(let slots): slots.count
            }
        }

        /// Whether every continuation runs on `.synchronous`; matched in place, without copies.
        @inlinable
        var allSynchronous: Bool {
            switch self {
            case .none: true
            case .one(let continuation): continuation.isSynchronous
            case .many(let slots): slots.allSynchronous()
            }
        }

        /// Adds `continuation` after the others. The first one is not numbered, so that a future's
        /// single continuation costs nothing more: a ``CancellableCallback`` starts at slot 0, and
        /// ``ContinuationSlots`` numbers both when a second arrives.
        @inlinable
        mutating func append(_ continuation: consuming Continuation<Value>) {
            switch self {
            case .none:
                self = .one(continuation)
            case .one(let first):
                self = .many(ContinuationSlots(first, continuation))
            case .many(var slots):
                self = .none  // so that the array is uniquely referenced and grows in place
                slots.append(continuation)
                self = .many(slots)
            }
        }

        /// Removes the continuation that `cancellable` belongs to, in O(1) (amortised, for `.many`).
        @inlinable
        mutating func remove(_ cancellable: CancellableCallback<Value>) -> Continuation<Value>? {
            switch self {
            case .none:
                return nil
            case .one(let continuation):
                guard continuation.uses(cancellable) else { return nil }
                self = .none
                return continuation
            case .many(var slots):
                self = .none  // so that the array is uniquely referenced
                let removed = slots.remove(cancellable)
                self = slots.isEmpty ? .none : .many(slots)  // the last one gone: the array goes too
                return removed
            }
        }
    }

    @inlinable
    init(_ storage: Storage) {
        self.storage = storage
    }

    /// A completed state.
    @inlinable
    init(_ result: Result<Value, any Error>) {
        switch result {
        case .success(let value): storage = .succeeded(NoContinuations(), StoredValue(value))
        case .failure(let error): storage = .failed(error)
        }
    }

    /// The result, or nil while pending.
    @inlinable @inline(__always)  // a call per read shows in callgrind `futurelib-sequence`
    var result: Result<Value, any Error>? {
        switch storage {
        case .pending, .pendingAtBoxedSite, .queued: nil
        // One case per pattern: a pattern shared by two cases copied the value out first (an
        // outlined copy per read; callgrind `futurelib-sequence`).
        case .succeeded(_, let value): .success(value.value(as: Value.self))
        case .succeededQueuing(_, let value): .success(value.value(as: Value.self))
        case .failed(let error): .failure(error)
        case .failedQueuing(_, let error): .failure(error)
        }
    }

    /// The queue whose work completes this pending future, if it is known; nil once it has a result.
    @inlinable
    var completingQueue: DispatchQueue? {
        if case .queued(_, let queue) = storage { return queue }
        return nil
    }

    /// Where the promise of a pending future was created (`fileCount` is the length of its file
    /// ID, which the future keeps beside its lock); nil once it has a result.
    @inlinable
    func pendingSite(fileCount: UInt16) -> CreationSite? {
        switch storage {
        case .pending(_, let site): site.unpacked(fileCount: fileCount)
        case .pendingAtBoxedSite(_, let box): box.site
        case .queued, .succeeded, .failed, .succeededQueuing, .failedQueuing: nil
        }
    }

    /// Whether continuations wait on this pending state. Matched in place: the common states
    /// (completed, or pending without continuations) cost a tag check.
    @inlinable
    var holdsContinuations: Bool {
        switch storage {
        case .pending(.none, _), .pendingAtBoxedSite(.none, _), .queued(.none, _): false
        case .pending, .pendingAtBoxedSite, .queued: true
        case .succeeded, .failed, .succeededQueuing, .failedQueuing: false
        }
    }

    /// How many continuations wait (or are queued behind the completer).
    @inlinable
    var waitingCount: Int {
        switch storage {
        case .pending(let waiting, _), .pendingAtBoxedSite(let waiting, _), .queued(let waiting, _): waiting.count
        case .succeeded, .failed: 0
        case .succeededQueuing(let queued, _), .failedQueuing(let queued, _): queued.count { $0 != nil }
        }
    }

    /// Takes the pending continuations out (moved, not copied: a continuation holds several
    /// references), leaving none; nil once the future has a result.
    @inlinable
    mutating func takeWaiting() -> Waiting? {
        switch storage {
        case .pending(let waiting, let site):
            storage = .pending(.none, site: site)
            return waiting
        case .pendingAtBoxedSite(let waiting, let site):
            storage = .pendingAtBoxedSite(.none, site: site)
            return waiting
        case .queued(let waiting, let queue):
            storage = .queued(.none, on: queue)
            return waiting
        case .succeeded, .failed, .succeededQueuing, .failedQueuing:
            return nil
        }
    }

    /// The continuations a completion dispatches, in registration order: the `Waiting` itself,
    /// moved out of the state (for one continuation, no array is made or destroyed: an empty
    /// `more` array costs a metadata lookup and a release through a value witness per completion;
    /// callgrind `futurelib-map`).
    @usableFromInline
    struct Ready: Sendable {
        @usableFromInline var waiting: Waiting
        /// Whether some continuation is not on `.synchronous`; the completer then ends its
        /// dispatching (``CompletionPhase/endDispatching()``) after handing those to their
        /// contexts, and dispatches what ``takeQueued(phase:)`` gives it meanwhile.
        @usableFromInline let hasAsynchronous: Bool

        @inlinable
        init(waiting: consuming Waiting, hasAsynchronous: Bool) {
            self.waiting = waiting
            self.hasAsynchronous = hasAsynchronous
        }

        /// Moves the continuations out, leaving none.
        @inlinable
        mutating func take() -> Waiting {
            let taken = waiting
            waiting = .none
            return taken
        }
    }

    /// Completes the future; returns the continuations to dispatch, or nil when it was already complete.
    @inlinable
    mutating func complete(with newResult: Result<Value, any Error>, phase: borrowing CompletionPhase) -> Ready? {
        guard let taken = takeWaiting() else { return nil }
        let hasAsynchronous = !taken.allSynchronous
        self = FutureState(newResult)
        phase.complete(dispatching: hasAsynchronous)
        return Ready(waiting: taken, hasAsynchronous: hasAsynchronous)
    }

    /// The continuations registered while the completer was dispatching (``CompletionPhase/queued``),
    /// to dispatch next in registration order (nil where a token removed one); the completer then
    /// tries to end dispatching again.
    @inlinable
    mutating func takeQueued(phase: borrowing CompletionPhase) -> [Continuation<Value>?] {
        phase.resumeDispatching()
        switch storage {
        case .succeededQueuing(let queued, let value):
            storage = .succeeded(NoContinuations(), value)
            return queued
        case .failedQueuing(let queued, let error):
            storage = .failed(error)
            return queued
        case .pending, .pendingAtBoxedSite, .queued, .succeeded, .failed:
            return []
        }
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

    /// Stores a continuation on a pending future, taking it out of `continuation`. On a complete
    /// one, a continuation on a context other than `.synchronous` queues behind the completer while
    /// it is still dispatching (so a serial context sees registration order); any other is left in
    /// `continuation` for the caller to dispatch.
    ///
    /// The continuation is made by the caller, outside the lock, and moved in: made here from a
    /// borrowed callback, it would be a copy (a retain, and a release of the caller's after the
    /// lock; callgrind `futurelib-map`). `isSynchronous` is its target's, read before it was made.
    @inlinable
    mutating func add(
        _ continuation: inout Continuation<Value>?,
        isSynchronous: Bool,
        phase: borrowing CompletionPhase
    ) -> AddAction {
        switch storage {
        case .pending(.none, let site):
            // The common case, a promise's first continuation: no copy of the state's parts.
            storage = .pending(.one(continuation.take()!), site: site)
        case .pending(var waiting, let site):
            storage = .pending(.none, site: site)  // so that an array is uniquely referenced
            waiting.append(continuation.take()!)
            storage = .pending(waiting, site: site)
        case .pendingAtBoxedSite(var waiting, let site):
            storage = .pendingAtBoxedSite(.none, site: site)
            waiting.append(continuation.take()!)
            storage = .pendingAtBoxedSite(waiting, site: site)
        case .queued(var waiting, let queue):
            storage = .queued(.none, on: queue)
            waiting.append(continuation.take()!)
            storage = .queued(waiting, on: queue)
        // Complete: each case reads its result where it matched it (matching the state again
        // for `result` costs instructions per registration; callgrind `futurelib-sequence`).
        // Queued while the completer dispatches only when not `.synchronous`.
        case .succeeded(_, let value):
            guard !isSynchronous, phase.joinDispatching() else {
                return .dispatch(.success(value.value(as: Value.self)))
            }
            let added = continuation.take()!
            added.placed(at: 0)
            storage = .succeededQueuing([added], value)
            return .queued
        case .failed(let error):
            guard !isSynchronous, phase.joinDispatching() else { return .dispatch(.failure(error)) }
            let added = continuation.take()!
            added.placed(at: 0)
            storage = .failedQueuing([added], error)
            return .queued
        case .succeededQueuing(var queued, let value):
            guard !isSynchronous, phase.joinDispatching() else {
                return .dispatch(.success(value.value(as: Value.self)))
            }
            storage = .succeeded(NoContinuations(), value)  // so that the array is uniquely referenced
            let added = continuation.take()!
            added.placed(at: queued.count)
            queued.append(added)
            storage = .succeededQueuing(queued, value)
            return .queued
        case .failedQueuing(var queued, let error):
            guard !isSynchronous, phase.joinDispatching() else { return .dispatch(.failure(error)) }
            storage = .failed(error)
            let added = continuation.take()!
            added.placed(at: queued.count)
            queued.append(added)
            storage = .failedQueuing(queued, error)
            return .queued
        }
        return .stored
    }

    /// Whether no result is set yet: every continuation stored is still here, as completion takes
    /// them all.
    @inlinable
    var isPending: Bool {
        switch storage {
        case .pending, .pendingAtBoxedSite, .queued: true
        case .succeeded, .failed, .succeededQueuing, .failedQueuing: false
        }
    }

    /// Removes the pending continuation that `cancellable` belongs to (its token was cancelled);
    /// nil if it already ran.
    ///
    /// O(1): the callback knows its slot (``CancellableCallback/slot``), so nothing is scanned. A
    /// scan cost O(n) under the lock per removal, O(n²) when n continuations waiting on one
    /// long-lived future are all cancelled (`CallgrindDriver futurelib-cancel-pending-<N>`).
    @inlinable
    mutating func remove(_ cancellable: CancellableCallback<Value>) -> Continuation<Value>? {
        switch storage {
        case .succeeded, .failed:
            return nil
        // Complete, the continuation may still be queued behind the completer's dispatching.
        case .succeededQueuing(var queued, let value):
            guard let removed = Self.queued(cancellable, in: queued) else { return nil }
            storage = .succeeded(NoContinuations(), value)  // so that the array is uniquely referenced
            queued[cancellable.slot] = nil
            storage = .succeededQueuing(queued, value)
            return removed
        case .failedQueuing(var queued, let error):
            guard let removed = Self.queued(cancellable, in: queued) else { return nil }
            storage = .failed(error)
            queued[cancellable.slot] = nil
            storage = .failedQueuing(queued, error)
            return removed
        case .pending, .pendingAtBoxedSite, .queued:
            break
        }
        guard case .some(var waiting) = takeWaiting() else { return nil }
        defer { put(waiting) }
        return waiting.remove(cancellable)
    }

    /// The continuation in `cancellable`'s slot of a queued array, if it is the callback's (only
    /// read: the caller clears the slot once the array is uniquely referenced).
    @inlinable
    static func queued(
        _ cancellable: CancellableCallback<Value>,
        in queued: [Continuation<Value>?]
    ) -> Continuation<Value>? {
        let slot = cancellable.slot
        guard slot < queued.count, let continuation = queued[slot], continuation.uses(cancellable) else { return nil }
        return continuation
    }

    /// Puts back the continuations ``takeWaiting()`` took from the pending state.
    @inlinable
    mutating func put(_ waiting: Waiting) {
        switch storage {
        case .pending(_, let site): storage = .pending(waiting, site: site)
        case .pendingAtBoxedSite(_, let site): storage = .pendingAtBoxedSite(waiting, site: site)
        case .queued(_, let queue): storage = .queued(waiting, on: queue)
        case .succeeded, .failed, .succeededQueuing, .failedQueuing:
            preconditionFailure("continuations put back into a completed state")
        }
    }
}

/// The first word of a succeeded state that has no continuations queued: it points at a shared
/// object without owning it, so copying the state's result costs no retain, and its spare bits
/// hold the state's case (which a word of raw bytes would not: the state would be 33 bytes, a
/// malloc size class up; callgrind `mallinfo-futurelib`).
@usableFromInline
struct NoContinuations: Sendable {
    @usableFromInline let marker: Unmanaged<ContextBox>

    @inlinable
    init() {
        marker = Unmanaged.passUnretained(ContextBox.default)
    }
}
