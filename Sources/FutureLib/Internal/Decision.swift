/// How `firstCompleted` and `firstSuccess` leave nothing on the inputs still pending once their
/// result is decided (a long-lived input, such as a shutdown future raced against each request,
/// would otherwise keep a continuation per call, and through it the result and the other inputs).
///
/// Each continuation stored on a pending input is a ``CancellableCallback`` with no token, kept
/// here; once the result completes, ``removeWaiting(when:)`` removes those whose input is still
/// pending, in O(1) each (``ContinuationSlots``). Inputs that are already complete need none:
/// their continuation runs at once, with no box (guarded by callgrind
/// `futurelib-first-completed`). `sequence()` and `zip` keep their continuations on pending
/// inputs: the same box per pending input would make `sequence()` of many pending futures much
/// dearer (callgrind `futurelib-sequence-pending`; Guarantees.md, "Known limits").
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

/// A continuation stored on a pending input of a ``Decision``, with that input.
@usableFromInline
struct WaitingContinuation<Value: Sendable>: RemovableContinuation {
    @usableFromInline let future: Future<Value>
    @usableFromInline let cancellable: CancellableCallback<Value>

    @inlinable
    init(on future: Future<Value>, _ cancellable: CancellableCallback<Value>) {
        self.future = future
        self.cancellable = cancellable
    }

    @inlinable
    func remove() {
        guard !future.isCompleted else { return }  // it has run, or runs now: nothing to remove
        cancellable.cancel(removingFrom: future)
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
}
