/// Where the task behind an async closure starts: on FutureLib's own threads (or on a context's),
/// or on the main actor.
///
/// Never Swift's cooperative pool: a task with an executor preference runs its nonisolated code,
/// and the code of default actors it calls, on that executor, so blocking cooperative threads on
/// `value()` cannot starve it.
@usableFromInline
enum TaskPlacement: Sendable {
    /// FutureLib's pool; the task is created there (``startOnPool(_:)``).
    case pool
    case executor(any TaskExecutor)
    case mainActor

    /// The jobs of the task run on `context`; `.default` and `.synchronous` mean FutureLib's pool
    /// (running a job inline on whatever thread resumes the task would run user code in places
    /// that must not, such as inside a token's `cancel()`).
    @usableFromInline
    static func on(_ context: some ExecutionContext) -> TaskPlacement {
        if context.isDefault || context.isSynchronous { return .pool }
        return .executor(ContextTaskExecutor(context))
    }

    /// Starts a task that runs `body` with the task cancelled when `cancellationToken` is
    /// (before `cancel()` returns, or at once if it already is).
    ///
    /// Usable from the async `onComplete`/`onSuccess`, which are specialized in the caller (it is
    /// not generic: inlining it would specialize nothing).
    @usableFromInline
    func start(cancellationToken: CancellationToken, _ body: @escaping @Sendable () async -> Void) {
        switch self {
        case .pool:
            Self.startOnPool { await withCancellation(cancellationToken) { await body() } }
        case .executor(let executor):
            Task(executorPreference: executor) {
                await withCancellation(cancellationToken) { await body() }
            }
        case .mainActor:
            Task { @MainActor in
                await withCancellation(cancellationToken) { await body() }
            }
        }
    }

    /// Starts a task that runs `body` on FutureLib's pool, created by the pool thread that starts
    /// running it (`Task.immediate`, inside a job of the pool) rather than by the caller.
    ///
    /// What it buys (guarded by `RoundsDriver 10`, 10,000 `Future { async }`): the task, its
    /// executor preference record and its closure are allocated and freed on one thread instead
    /// of allocated by the caller and freed by a pool thread, which glibc's malloc serves slowly
    /// (cross-thread frees take the arena's lock); and the caller's share of the work shrinks to
    /// queueing one closure (Documentation/Internals.md has the figures).
    ///
    /// So the task is like `Task.detached`: it does not inherit the caller's priority or
    /// task-local values. Where `Task.immediate` is not available (before macOS 26 and its
    /// siblings), a task created by the caller, preferring the pool.
    ///
    /// `body` is `@isolated(any)` (the closures passed here are nonisolated: no isolation), so that
    /// it reaches `Task.immediate` without a wrapping closure (see ``WorkerPool/Work/task(_:)``).
    @usableFromInline
    static func startOnPool(_ body: @escaping @Sendable @isolated(any) () async -> Void) {
        let pool = WorkerPool.shared
        if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
            pool.submit(.task(body))
        } else {
            Task(executorPreference: pool, operation: body)
        }
    }
}

/// Runs a task's jobs on an ``ExecutionContext``.
final class ContextTaskExecutor<Context: ExecutionContext>: TaskExecutor {
    let context: Context

    init(_ context: Context) {
        self.context = context
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        context.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

extension Future {
    /// Completes this future with what async `work` returns or throws, run in a task at
    /// `placement`; `cancellationToken` cancels the task and fails the future with
    /// `CancellationError` at once, without waiting for the task to notice.
    ///
    /// Inlinable, with the task bodies below, so that `Future { async … }` is specialized in the
    /// caller: completing an unspecialized future looks up generic metadata several times
    /// (guarded by `RoundsDriver 10`).
    @inlinable
    func run(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ work: @escaping @Sendable () async throws -> Value
    ) {
        if failIfCancelled(cancellationToken) { return }
        guard cancellationToken.canBeCancelled else {
            // A token that can never fire (`.none`, or one whose request is gone) needs no handler
            // and no task cancellation: one closure context and a registration fewer per future.
            switch placement {
            case .pool:
                TaskPlacement.startOnPool { [self] in await complete(running: work) }
            case .executor(let executor):
                Task(executorPreference: executor) { [self] in await complete(running: work) }
            case .mainActor:
                Task { @MainActor [self] in await complete(running: work) }
            }
            return
        }
        let registration = cancellationToken.onCancel { [self] in
            complete(with: .failure(cancelledFailure))
        }
        // One closure context per task (the task's own), not a second one for a wrapped body.
        switch placement {
        case .pool:
            TaskPlacement.startOnPool { [self] in
                await complete(running: work, cancellationToken: cancellationToken, registration: registration)
            }
        case .executor(let executor):
            Task(executorPreference: executor) { [self] in
                await complete(running: work, cancellationToken: cancellationToken, registration: registration)
            }
        case .mainActor:
            Task { @MainActor [self] in
                await complete(running: work, cancellationToken: cancellationToken, registration: registration)
            }
        }
    }

    /// Completes this future with what `work` returns or throws, in a task on FutureLib's pool:
    /// `Future { async … }` with a token that can never fire. `work` is taken as it is: passed to
    /// ``run(at:cancellationToken:_:)`` it would be wrapped in one more closure, allocated, to
    /// drop its `@concurrent` (`RoundsDriver 10`).
    @inlinable
    func runOnPool(_ work: @escaping @Sendable @concurrent () async throws -> Value) {
        TaskPlacement.startOnPool { [self] in
            do {
                complete(with: .success(try await work()))
            } catch {
                complete(with: .failure(error))
            }
        }
    }

    /// The body of ``run(at:cancellationToken:_:)``'s task when no token can cancel it.
    @inlinable
    func complete(running work: @Sendable () async throws -> Value) async {
        do {
            complete(with: .success(try await work()))
        } catch {
            complete(with: .failure(error))
        }
    }

    /// The body of ``run(at:cancellationToken:_:)``'s task, on the task's executor: runs `work`
    /// with the task cancelled by the token, and completes this future with its outcome.
    @inlinable
    func complete(
        running work: @Sendable () async throws -> Value,
        cancellationToken: CancellationToken,
        registration: CancellationRegistration
    ) async {
        defer { registration.unregister() }
        // Cancelled while the task waited to start: `work` is not started (the handler above has
        // failed the future, or is failing it: a no-op here then).
        if failIfCancelled(cancellationToken) { return }
        // The token's handlers run newest first, so the task may see its cancellation and
        // finish before the handler above fails the future: a cancelled token still wins.
        do {
            let value = try await withCancellation(cancellationToken) { try await work() }
            complete(with: cancellationToken.isCancellationRequested ? .failure(cancelledFailure) : .success(value))
        } catch {
            complete(with: .failure(cancellationToken.isCancellationRequested ? cancelledFailure : error))
        }
    }

    /// The future an async combinator returns. When this future completes, `step` gives either
    /// the result at once (a failure that `map` passes on) or async work, which runs in a task at
    /// `placement`. A token cancelled first fails the new future with `CancellationError` at once,
    /// and `step` is never called.
    @inlinable
    func deriveAsync<U: Sendable>(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ step: @escaping @Sendable (Result<Value, any Error>) -> AsyncStep<U>
    ) -> Future<U> {
        // The one derive path: the new future owns the token registration until `step` has run.
        derive(Future<U>(), target: .synchronous, cancellationToken: cancellationToken) { result, derived in
            switch step(result) {
            case .done(let result): derived.complete(with: result)
            case .run(let work): derived.run(at: placement, cancellationToken: cancellationToken, work)
            }
        }
    }
}

/// What an async combinator does with its source's result.
@usableFromInline
enum AsyncStep<U: Sendable>: Sendable {
    /// Completes the new future with this result, with no task.
    case done(Result<U, any Error>)
    /// Runs this work in a task.
    case run(@Sendable () async throws -> U)
}
