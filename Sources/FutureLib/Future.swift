public import Dispatch  // public: `init(completedOn:)` is inlinable
public import FutureLibConcurrencyHelpers  // public: inlinable code uses its lock

/// A value that becomes available later, exactly once: a success or an error.
///
/// A future is read-only; its ``Promise`` (or the work given to `init`) completes it. Register
/// continuations with ``onComplete(on:cancellationToken:_:)-xald``, compose futures with combinators
/// such as ``map(on:cancellationToken:_:)-9ghqj`` and ``flatMap(on:cancellationToken:_:)-9x49y``, or wait
/// for the result with `value()` (blocking) or `try await value()` (async).
///
/// ```swift
/// let future = Future { try String(contentsOfFile: path) }  // runs on `.default`
/// future.onSuccess { text in print(text.count) }
/// let text = try await future.value()
/// ```
///
/// ### Completion
/// A future completes exactly once; the result never changes afterwards. Continuations run
/// exactly once each, on the context they were given, and are released after they ran.
/// Continuations on a serial context run in registration order. Completing a future never runs
/// a continuation while holding the future's lock, so a continuation may register more.
///
/// ### Cancellation
/// A future has no `cancel()`: it may have many consumers. The code that starts the work takes
/// a `CancellationToken`; each continuation and combinator takes one too, which removes just
/// that consumer. See `CancellationRequest`.
public final class Future<Value: Sendable>: Sendable {
    // Declared in this order for size: `phase` fills the padding after the lock.
    @usableFromInline let lock = RawLock()
    /// Whether the future has a result, so that `isCompleted` and `Promise.deinit` need no lock
    /// (and, in unspecialized generic code, no generic metadata lookups); and whether its
    /// completer is still dispatching, which it ends without the lock.
    @usableFromInline let phase: CompletionPhase
    /// The length of the file ID of the promise's creation site, for the pending state's
    /// ``PackedSite``: in the two bytes of padding after `phase` (callgrind `mallinfo-futurelib`).
    @usableFromInline let siteFileCount: UInt16
    // Sendable: only read and written inside `withState`, that is with `lock` held. Not a
    // `Lock<FutureState<Value>>`: that costs four generic metadata lookups in every `deinit`.
    @exclusivity(unchecked) @usableFromInline nonisolated(unsafe) var state: FutureState<Value>

    /// A pending future, completed by its work.
    @inlinable
    init() {
        state = FutureState(.pending(.none, site: .unknown))
        phase = CompletionPhase(completed: false)
        siteFileCount = 0
    }

    /// A pending future, completed by work queued on `queue` (for the blocking `value()`'s
    /// main-queue check).
    @inlinable
    init(completedOn queue: DispatchQueue) {
        state = FutureState(.queued(.none, on: queue))
        phase = CompletionPhase(completed: false)
        siteFileCount = 0
    }

    /// A combinator's pending future, completed by a callback that runs on `target`: one
    /// completed on a queue remembers it, for the blocking `value()`'s main-queue check. Always
    /// inlined: a `map` otherwise pays for the call (callgrind `futurelib-map`).
    @inlinable @inline(__always)
    convenience init(derivedFor target: ContinuationTarget) {
        if case .queue(let queue) = target {
            self.init(completedOn: queue)
        } else {
            self.init()
        }
    }

    /// A pending future, completed by the ``Promise`` created at `site`.
    @inlinable
    init(createdAt site: CreationSite) {
        if let (packed, fileCount) = PackedSite.pack(site) {
            state = FutureState(.pending(.none, site: packed))
            siteFileCount = fileCount
        } else {
            state = FutureState(.pendingAtBoxedSite(.none, site: SiteBox(site)))
            siteFileCount = 0
        }
        phase = CompletionPhase(completed: false)
    }

    deinit {
        // Continuations still waiting (a future that never completed) hold the futures derived
        // from it, whose continuations hold theirs: released here, a chain of a million `map`s
        // would nest a million `deinit`s. Handed to the thread's release queue instead. A
        // completed future holds none: the lock-free phase answers for the common case (a match
        // on the state here cost every future's `deinit`; `futurelib-map` guards it).
        if !phase.isCompleted { releaseContinuations() }
        // The state destroys itself without generic metadata; only an inline value needs
        // `Value`'s, which the class metadata holds. (Read in place: copying the state would look
        // up its metadata; see ``StoredValue``, guarded by callgrind `futurelib-map`.)
        guard !_isPOD(Value.self) else { return }
        switch state.storage {
        case .succeeded(_, let value), .succeededQueuing(_, let value): value.destroyInline(as: Value.self)
        case .pending, .pendingAtBoxedSite, .queued, .failed, .failedQueuing: break
        }
    }

    /// Creates a future that already succeeded with `value`.
    ///
    /// ```swift
    /// func cachedUser(_ id: Int) -> Future<User> {
    ///     if let user = cache[id] { return Future(value: user) }
    ///     return fetchUser(id)
    /// }
    /// ```
    ///
    /// - Parameter value: The value.
    @inlinable
    public init(value: Value) {
        state = FutureState(.succeeded(NoContinuations(), StoredValue(value)))
        phase = CompletionPhase(completed: true)
        siteFileCount = 0
    }

    /// Creates a future that already failed with `error`.
    ///
    /// ```swift
    /// func validated(_ text: String) -> Future<URL> {
    ///     guard let url = URL(string: text) else { return Future(error: URLError(.badURL)) }
    ///     return Future(value: url)
    /// }
    /// ```
    ///
    /// - Parameter error: The error.
    @inlinable
    public init(error: any Error) {
        state = FutureState(.failed(error))
        phase = CompletionPhase(completed: true)
        siteFileCount = 0
    }

    /// Creates a future completed by running `work` on `context`.
    ///
    /// ```swift
    /// let request = CancellationRequest(cancelAfter: .seconds(1))
    /// let digest = Future(on: .default, cancellationToken: request.token) { try sha256(of: file) }
    /// ```
    ///
    /// ### Semantics
    /// - `work` runs at most once, on `context`; the future completes with what it returns or throws.
    ///
    /// ### Cancellation
    /// If the token is cancelled before `work` starts, `work` never runs. If it is cancelled while
    /// `work` runs, the future fails with `CancellationError` at once and the value that `work`
    /// returns later is dropped; `work` itself can check the token to stop early.
    ///
    /// - Parameters:
    ///   - context: Where `work` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the future (and skips `work` if it has not started).
    ///   - work: Produces the value, or throws the error the future fails with.
    public convenience init(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ work: @escaping @Sendable () throws -> Value
    ) {
        if let queue = context as? DispatchQueue {
            self.init(completedOn: queue)  // so that a blocking `value()` on the main queue can refuse
        } else {
            self.init()
        }
        if failIfCancelled(cancellationToken) { return }
        let registration = cancellationToken.onCancel { [self] in
            complete(with: .failure(cancelledFailure))
        }
        context.execute { [self] in
            defer { registration.unregister() }
            guard !cancellationToken.isCancellationRequested else {
                // `cancel()` may not have reached the handler above yet, and unregistering would
                // then drop it: complete here, or the future could stay pending forever.
                complete(with: .failure(cancelledFailure))
                return
            }
            complete(with: Result { try work() })
        }
    }

    /// Creates a future completed by running `work` on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Form {
    ///     var name = "Ada"
    ///     func snapshot() -> Future<String> { Future(on: .mainActor) { self.name } }
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// As ``init(on:cancellationToken:_:)``: a token cancelled before `work` starts skips it.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Cancels the future (and skips `work` if it has not started).
    ///   - work: Produces the value, or throws the error the future fails with.
    public convenience init(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ work: @escaping @MainActor () throws -> Value
    ) {
        self.init(on: context.queue, cancellationToken: cancellationToken) {
            try MainActor.assumeIsolated { try work() }
        }
    }

    /// Creates a future completed by running async `work` in a new task.
    ///
    /// The task runs on FutureLib's own threads, not on Swift's cooperative pool, so blocking on
    /// the future from a cooperative thread cannot starve it.
    ///
    /// ```swift
    /// let page = Future(cancellationToken: request.token) {
    ///     try await URLSession.shared.data(from: url).0
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// Cancelling the token cancels the task (before `cancel()` returns) and fails the future
    /// with `CancellationError` at once, without waiting for the task to notice.
    ///
    /// ### Task
    /// The task is created by the FutureLib thread that starts running it, so, like
    /// `Task.detached`, it does not inherit the caller's priority or task-local values: pass
    /// what `work` needs in its captures, or make the task yourself and wrap it,
    /// `Future(Task { … })`, which inherits them and runs on Swift's cooperative pool. (Before
    /// macOS 26 and its siblings the caller creates the task, which then inherits them.)
    ///
    /// - Parameters:
    ///   - cancellationToken: Cancels the task and the future.
    ///   - work: Produces the value, or throws the error the future fails with.
    @inlinable  // specialized in the caller: see `run(at:cancellationToken:_:)`
    public convenience init(
        cancellationToken: CancellationToken = .none,
        _ work: @escaping @Sendable @concurrent () async throws -> Value
    ) {
        self.init()
        guard cancellationToken.canBeCancelled else {
            runOnPool(work)  // nothing to watch: no handler, no registration, `work` not re-wrapped
            return
        }
        run(at: .pool, cancellationToken: cancellationToken, work)
    }

    /// The result, or nil while the future is pending.
    ///
    /// A snapshot: it never blocks, and once non-nil it never changes.
    ///
    /// ```swift
    /// if case .success(let user)? = future.result { show(user) }
    /// ```
    @inlinable
    public var result: Result<Value, any Error>? {
        withState { $0.result }
    }

    /// Whether the future has a result.
    ///
    /// Lock-free; when it is `true`, ``result`` is non-nil.
    ///
    /// ```swift
    /// #expect(Future(value: 1).isCompleted)
    /// ```
    @inlinable
    public var isCompleted: Bool {
        phase.isCompleted
    }

    // MARK: - Completion (internal: promises and combinators)

    /// Runs `body` on the state with the lock held. Never call user code from `body`.
    @inlinable
    func withState<R>(_ body: (inout FutureState<Value>) throws -> R) rethrows -> R {
        try lock.withLock { try body(&state) }
    }

    /// Completes the future unless it is already complete; true if this call completed it.
    /// Continuations run after the lock is released.
    ///
    /// Continuations on other contexts are handed to them first, then those registered on such
    /// contexts meanwhile (by another thread, or by one of those continuations), and only then
    /// do the `.synchronous` ones run inline. So a continuation that a `.synchronous` one
    /// registers on a serial context still runs after the earlier ones on that context. The
    /// completer ends its dispatching without the lock unless some were registered meanwhile:
    /// one lock acquisition per completion.
    @inlinable @discardableResult
    func complete(with result: Result<Value, any Error>) -> Bool {
        guard var ready = withState({ $0.complete(with: result, phase: phase) }) else { return false }
        if !ready.hasAsynchronous {
            // The common case: only `.synchronous` continuations, run in registration order.
            // Moved out of `ready` rather than copied: a continuation holds several references.
            switch ready.take() {
            case .none: break
            case .one(let continuation): continuation.dispatch(result)
            case .many(let many): for case let continuation? in many.slots { continuation.dispatch(result) }
            }
            return true
        }
        var first: Continuation<Value>? = nil
        var more: [Continuation<Value>?] = []  // nil where a token removed one
        switch ready.take() {
        case .none: break
        case .one(let continuation): first = continuation
        case .many(let many): more = many.slots
        }
        if let first, !first.isSynchronous { first.dispatch(result) }
        for case let continuation? in more where !continuation.isSynchronous { continuation.dispatch(result) }
        while !phase.endDispatching() {
            for case let continuation? in withState({ $0.takeQueued(phase: phase) }) { continuation.dispatch(result) }
        }
        if let first, first.isSynchronous { first.dispatch(result) }
        for case let continuation? in more where continuation.isSynchronous { continuation.dispatch(result) }
        return true
    }

    /// Moves the continuations of a pending future that is being deallocated to
    /// ``DeferredRelease``, which releases them after this `deinit` (and those it leads to) returned.
    @inline(never) @usableFromInline
    func releaseContinuations() {
        guard state.holdsContinuations, let waiting = state.takeWaiting() else { return }
        // `consume`: moved into the queue. A copy would leave this binding holding the chain until
        // the function returns, after the outermost release has drained the queue, so the next
        // future's `deinit` would run from here, nested, one frame deeper per stage: a deep chain
        // on a future that never completes, released from its root, would overflow the stack
        // (unoptimized builds keep such copies; guarded by `NeverCompletedReleaseAttacks`).
        DeferredRelease.release(consume waiting)
    }

    /// Fails the future with ``FutureError/brokenPromise``, naming the site its pending state
    /// keeps: its promise was dropped unresolved.
    ///
    /// Out of line, so that `Promise.deinit` (never specialized) looks up no generic metadata on
    /// its common path, the resolved promise.
    @inline(never) @usableFromInline
    func breakPromise() {
        guard let site = withState({ $0.pendingSite(fileCount: siteFileCount) }) else { return }  // completed meanwhile
        if complete(with: .failure(FutureError.brokenPromise(createdAt: site))) {
            FutureDiagnostics.reportBrokenPromise(createdAt: site, valueType: Value.self)  // opt-in; rare path
        }
    }
}
