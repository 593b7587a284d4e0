/// What a continuation wants: the whole result, only the value, or only the error; or, when a
/// token can remove it early, one of those inside a ``CancellableCallback``.
@usableFromInline
enum Callback<Value: Sendable>: Sendable {
    case result(@Sendable (Result<Value, any Error>) -> Void)
    case value(@Sendable (Value) -> Void)
    case error(@Sendable (any Error) -> Void)
    case cancellable(CancellableCallback<Value>)

    /// Calls the closure if it wants this result; a cancellable callback then gives up its
    /// token registration (the callback has run: nothing is left for the token to remove).
    @inlinable
    func invoke(with result: Result<Value, any Error>) {
        if case .cancellable(let cancellable) = self {
            cancellable.run(with: result)
            cancellable.registration?.unregister()
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

/// A callback that a token can remove before the future completes, with the one registration
/// on that token.
///
/// The future keeps the box in its continuation; the box is also the token's handler (its closure
/// captures the box alone, which then serves as the closure's context: no allocation), and finds
/// the continuation by its own identity. While it is registered, the box holds the future in
/// `source`: that hold is what keeps a pending future that nobody else holds (and so its chain)
/// alive while the token can still fire, and no longer. The cycle future → continuation → box →
/// future is broken when the handler is called: by the token, which removes the continuation; or,
/// once the token can no longer fire (its request deallocated uncancelled, with no timer or link
/// left to cancel it), by the token releasing it unrun, which calls it once more
/// (``CancellationToken/onCancelOrRelease(_:)``): the box then lets go of `source`, and the future is
/// released with its continuations, the box among them. The registration lives until the callback
/// has run (``Callback/invoke(with:)`` gives it up) or the token fires.
///
/// Two owners use it:
/// - a continuation (`onComplete`, `onSuccess`, `onFailure`): removed by the token, it is called
///   once with `CancellationError` on its context (never for `onSuccess`);
/// - a combinator's derived future (`map`, `flatMap`, …, see ``Future/derive(on:cancellationToken:_:)``):
///   the token fails the derived future with `CancellationError` at once, on the cancelling
///   thread, and the removed callback is released without running anything on its context.
///
/// Not final: `map` and `flatMap` with a token use a subclass that stores their closure and
/// derived future itself (``MapCallback``, ``FlatMapCallback``), so that the box is also the
/// callback's context.
@usableFromInline
class CancellableCallback<Value: Sendable>: @unchecked Sendable {
    // Sendable: `callback` and `failDerived` are constants. `registration` is written once, by
    // the registering thread before it stores the continuation under the future's lock, and read
    // only by whoever runs the callback, which got it from the state under that lock (or on the
    // registering thread itself). `slot` is read and written only under the future's lock.
    // `source` and `token` are written by the registering thread before the registration (the
    // token's lock orders the writes before any call of the handler), then read, and `source`
    // cleared, only by the handler, which the token calls once. No two accesses to a `var` here
    // overlap, by the same protocol: they are `@exclusivity(unchecked)`, since a class's stored
    // property otherwise costs a dynamic exclusivity check per access (callgrind
    // `futurelib-cancel-pending-1000`).
    @usableFromInline final let callback: Callback<Value>
    /// For a combinator: fails its derived future with `CancellationError`. Nil for a continuation.
    @usableFromInline final let failDerived: (@Sendable () -> Void)?
    @usableFromInline @exclusivity(unchecked) final var registration: CancellationRegistration?
    /// Where the future keeps the continuation, so that removing it needs no scan: its index in
    /// ``ContinuationSlots`` or in a queued array (0, where a first continuation is, until it is
    /// stored after others). A stale slot is harmless: removal checks the continuation there.
    @usableFromInline @exclusivity(unchecked) final var slot = 0
    /// The future whose continuation this is, while the box is registered on `token`.
    @usableFromInline @exclusivity(unchecked) final var source: Future<Value>?
    /// The token the box is registered on (for ``MapCallback`` and ``FlatMapCallback``: their
    /// combinator's token, also when nothing is registered).
    @usableFromInline @exclusivity(unchecked) final var token = CancellationToken.none

    @inlinable
    init(_ callback: Callback<Value>, failDerived: (@Sendable () -> Void)? = nil) {
        self.callback = callback
        self.failDerived = failDerived
    }

    /// Runs the callback with the result: ``Callback/invokeClosure(with:)``, or what a subclass
    /// does instead. A callback whose token was cancelled before it started gets
    /// `CancellationError` instead of the result (never a value-only one, which is then not called):
    /// the token may fire after the future handed the continuation to its context and before the
    /// context ran it, when there was nothing left to remove.
    @inlinable
    func run(with result: Result<Value, any Error>) {
        if token.isCancellationRequested {
            callback.invokeClosure(with: .failure(cancelledFailure))
        } else {
            callback.invokeClosure(with: result)
        }
    }

    /// The token's handler (``Future/register(_:target:cancellationToken:)``): called once, when
    /// the token fires (it then cancels), or when the token releases it unrun (cancellation not
    /// requested: it only lets go of `source`). The future is released here, outside every lock.
    @inlinable
    final func tokenHandlerCalled() {
        guard let source = source.take(), token.isCancellationRequested else { return }
        cancel(removingFrom: source)
    }

    /// Fires for the token's handler (and the registering thread's check after storing the continuation):
    /// fails the derived future, or removes the continuation from `future`, which then gets
    /// `CancellationError`. Removal happens under the future's lock, so of two callers exactly one
    /// removes it.
    @inlinable
    final func cancel(removingFrom future: Future<Value>) {
        failDerived?()
        guard let removed = future.withState({ $0.remove(self) }) else { return }
        if failDerived == nil { future.cancelled(removed) }
        // Released after the lock, also when unused above (a combinator's, or a ``Decision``'s):
        // its closure's captures are user code, and a value no longer used may otherwise be
        // released inside the lock in release builds.
        withExtendedLifetime(removed) {}
    }
}

/// A continuation waiting for a future: what to call, and where.
///
/// Stored as one enum whose cases carry the target beside the closure, so that the enum's case
/// lives in the spare bits of the target's reference: 24 bytes, where a struct of a target and a
/// ``Callback`` would take 25; and `FutureState.Waiting`, one of these or an array, is 24 bytes
/// too, which leaves spare bits for the state's own case: the pending state, a site word beside
/// it, fits in 32 bytes (guarded by callgrind `mallinfo-futurelib`; see ``FutureState``).
@usableFromInline
struct Continuation<Value: Sendable>: Sendable {
    @usableFromInline var storage: Storage

    @usableFromInline
    enum Storage: Sendable {
        case result(ContinuationTarget, @Sendable (Result<Value, any Error>) -> Void)
        case value(ContinuationTarget, @Sendable (Value) -> Void)
        case error(ContinuationTarget, @Sendable (any Error) -> Void)
        case cancellable(ContinuationTarget, CancellableCallback<Value>)
    }

    @inlinable
    init(target: consuming ContinuationTarget, callback: consuming Callback<Value>) {
        switch callback {
        case .result(let body): storage = .result(target, body)
        case .value(let body): storage = .value(target, body)
        case .error(let body): storage = .error(target, body)
        case .cancellable(let box): storage = .cancellable(target, box)
        }
    }

    /// Where the callback runs.
    @inlinable
    var target: ContinuationTarget {
        switch storage {
        case .result(let target, _), .value(let target, _), .error(let target, _), .cancellable(let target, _): target
        }
    }

    /// What to call.
    @inlinable
    var callback: Callback<Value> {
        switch storage {
        case .result(_, let body): .result(body)
        case .value(_, let body): .value(body)
        case .error(_, let body): .error(body)
        case .cancellable(_, let box): .cancellable(box)
        }
    }

    /// Whether it runs on `.synchronous`; matched in place, without copying the target or the
    /// closure (a copy costs a retain and a release).
    @inlinable
    var isSynchronous: Bool {
        switch storage {
        case .result(.synchronous, _), .value(.synchronous, _), .error(.synchronous, _), .cancellable(.synchronous, _):
            true
        case .result, .value, .error, .cancellable:
            false
        }
    }

    /// Whether `cancellable` is this continuation's box.
    @inlinable
    func uses(_ cancellable: CancellableCallback<Value>) -> Bool {
        if case .cancellable(_, let box) = storage { return box === cancellable }
        return false
    }

    /// Tells a cancellable callback that it is stored at `slot` (``CancellableCallback/slot``).
    @inlinable
    func placed(at slot: Int) {
        if case .cancellable(_, let box) = storage { box.slot = slot }
    }

    /// Runs the callback on its context. Never call it with a lock held.
    @inlinable
    consuming func dispatch(_ result: Result<Value, any Error>) {
        if isSynchronous {
            // The common case of combinators: no closure allocation unless nested too deeply.
            if let thread = Trampoline.enterInline() {
                invoke(with: result)
                Trampoline.leaveInline(thread)
                return
            }
            let callback = self.callback
            Trampoline.run { callback.invoke(with: result) }
        } else {
            let callback = self.callback
            target.execute { callback.invoke(with: result) }
        }
    }

    /// ``Callback/invoke(with:)`` on the stored closure, moved out of the continuation.
    @inlinable
    consuming func invoke(with result: Result<Value, any Error>) {
        // Consuming, and not a switch over `(storage, result)`: the closure is moved out, not
        // copied (a copy costs a retain and a release per continuation; callgrind `futurelib-map`).
        switch (consume self).storage {
        case .result(.synchronous, let body):
            // Matched apart: the target is then known to hold no reference, and is not released
            // (a call per `.synchronous` continuation; callgrind `futurelib-map`).
            body(result)
        case .result(_, let body):
            body(result)
        case .value(_, let body):
            if case .success(let value) = result { body(value) }
        case .error(_, let body):
            if case .failure(let error) = result { body(error) }
        case .cancellable(_, let cancellable):
            cancellable.run(with: result)
            cancellable.registration?.unregister()
        }
    }
}

/// The box of a `map` with a token: stores the transform and the derived future itself, so that
/// one object is the continuation's callback, its token handler and the closure's context.
@usableFromInline
final class MapCallback<Value: Sendable, U: Sendable>: CancellableCallback<Value>, @unchecked Sendable {
    // Sendable: `transform` and `derived` are constants; the rest as ``CancellableCallback`` says.
    @usableFromInline let transform: @Sendable (Value) throws -> U
    @usableFromInline let derived: Future<U>

    @inlinable
    init(_ transform: @escaping @Sendable (Value) throws -> U, derived: Future<U>) {
        self.transform = transform
        self.derived = derived
        // Neither closure allocates: the first captures nothing, the second `derived` alone.
        super.init(.result { _ in }, failDerived: { derived.complete(with: .failure(cancelledFailure)) })
    }

    @inlinable
    override func run(with result: Result<Value, any Error>) {
        if derived.failIfCancelled(token) { return }  // the token won meanwhile
        derived.complete(with: Result { try transform(result.get()) })
    }
}

/// The box of a `flatMap` with a token, as ``MapCallback`` is `map`'s.
@usableFromInline
final class FlatMapCallback<Value: Sendable, U: Sendable>: CancellableCallback<Value>, @unchecked Sendable {
    // Sendable: `transform` and `derived` are constants; the rest as ``CancellableCallback`` says.
    @usableFromInline let transform: @Sendable (Value) throws -> Future<U>
    @usableFromInline let derived: Future<U>

    @inlinable
    init(_ transform: @escaping @Sendable (Value) throws -> Future<U>, derived: Future<U>) {
        self.transform = transform
        self.derived = derived
        super.init(.result { _ in }, failDerived: { derived.complete(with: .failure(cancelledFailure)) })
    }

    @inlinable
    override func run(with result: Result<Value, any Error>) {
        if derived.failIfCancelled(token) { return }  // the token won meanwhile
        do {
            derived.complete(with: try transform(result.get()), cancellationToken: token)
        } catch {
            derived.complete(with: .failure(error))
        }
    }
}
