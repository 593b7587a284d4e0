/// How `firstCompleted` and `firstSuccess` leave nothing on the inputs still pending once their
/// result is decided (a long-lived input, such as a shutdown future raced against each request,
/// would otherwise keep a continuation per call, and through it the result and the other inputs).
///
/// Each continuation stored on a pending input is a ``CancellableCallback`` with no token, kept
/// here; once the result completes, ``removeWaiting(when:)`` removes those whose input is still
/// pending, in O(1) each (``ContinuationSlots``), holding neither those inputs nor their
/// continuations (``WaitingContinuation``). Inputs that are already complete need none:
/// their continuation runs at once, with no box (guarded by callgrind
/// `futurelib-first-completed`). `sequence()` and `zip` leave their continuations on inputs
/// still pending when they fail fast (those hold the failed result, not the inputs): the same
/// box per pending input would make `sequence()` of many pending futures much dearer (callgrind
/// `futurelib-sequence-pending`; Guarantees.md, "Known limits").
@usableFromInline
struct Decision: Sendable {
    /// The continuations stored on inputs that were pending.
    @usableFromInline var waiting: [any RemovableContinuation] = []

    @inlinable
    init() {}

    /// Once `result` completes (now, if it has), removes the continuations from the inputs still
    /// pending. Called after the last input's continuation was stored, so that none is missed.
    @inlinable
    consuming func removeWaiting<U>(when result: Future<U>) {
        guard !waiting.isEmpty else { return }
        let waiting = self.waiting
        result.observe(
            on: .synchronous,
            cancellationToken: .none,
            .result { _ in
                for continuation in waiting { continuation.remove() }
            }
        )
    }
}

/// A continuation that a ``Decision`` removes from its future.
@usableFromInline
protocol RemovableContinuation: Sendable {
    /// Removes the continuation without calling it; a no-op once it ran.
    func remove()
}

/// A continuation stored on a pending input of a ``Decision``, with that input, neither of them
/// kept: each continuation holds the result, which holds the decision until it completes, so a
/// strong hold would keep a pending input that nobody else holds, its continuation and the result
/// for good (input → continuation → result → decision → input).
///
/// The input is held weakly: released meanwhile, it took its continuation with it. The
/// continuation is `unowned`, with no side table to allocate per call (a weak reference would
/// cost one; callgrind `futurelib-first-completed`): it is read only under the input's lock while
/// the input is pending, when the input still stores it (only completion or this removal takes
/// it out, and the decision removes each once), so it is alive.
@usableFromInline
struct WaitingContinuation<Value: Sendable>: RemovableContinuation {
    @usableFromInline weak var future: Future<Value>?
    @usableFromInline unowned let cancellable: CancellableCallback<Value>

    @inlinable
    init(on future: Future<Value>, _ cancellable: CancellableCallback<Value>) {
        self.future = future
        self.cancellable = cancellable
    }

    /// Called once, by the decision.
    @inlinable
    func remove() {
        // Completed: it has run, or runs now; nothing to remove.
        guard let future, !future.isCompleted else { return }
        let removed = future.withState { $0.isPending ? $0.remove(cancellable) : nil }
        // Released after the lock: its closure's captures are user code.
        withExtendedLifetime(removed) {}
    }
}

extension Future {
    /// Stores `callback` (`.synchronous`) for a combinator deciding with `decision`: a completed
    /// future calls it at once; a pending one keeps it until it completes or the decision removes it.
    @inlinable
    func observe(until decision: inout Decision, _ callback: Callback<Value>) {
        guard !isCompleted else {
            add(target: .synchronous, callback: callback)
            return
        }
        // `failDerived` is a no-op: removed, the callback is not called (the result is decided).
        let cancellable = CancellableCallback(callback, failDerived: {})
        if add(target: .synchronous, callback: .cancellable(cancellable)) {
            decision.waiting.append(WaitingContinuation(on: self, cancellable))
        }
    }

    /// Stores `callback` (`.synchronous`) for a race: removed, without being called, from this
    /// future still pending when `token` fires. The token's handler holds this future and the
    /// callback weakly (unlike ``register(_:target:cancellationToken:)``'s), so the callback may
    /// hold what cancels the token: a pending future that nobody else holds is released with it.
    func observe(removedBy token: CancellationToken, _ callback: Callback<Value>) {
        if token.isCancellationRequested { return }  // decided already: as if removed at once
        guard !isCompleted else {
            add(target: .synchronous, callback: callback)
            return
        }
        // `failDerived` is a no-op: removed, the callback is not called (the race is decided).
        let cancellable = CancellableCallback(callback, failDerived: {})
        cancellable.registration = token.onCancel { [weak self, weak cancellable] in
            guard let self, let cancellable else { return }  // released, or run: nothing to remove
            cancellable.cancel(removingFrom: self)
        }
        add(target: .synchronous, callback: .cancellable(cancellable))
        // A handler that ran before the callback was stored found nothing to remove.
        if token.isCancellationRequested { cancellable.cancel(removingFrom: self) }
    }
}
