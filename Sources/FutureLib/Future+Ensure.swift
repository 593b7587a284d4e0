// Cleanup that always runs: `ensure`, PromiseKit's name for it (and `finally` in other libraries).
//
// Why `ensure` and not `always`: it reads as what it promises ("ensure the spinner stops"), it is
// the name PromiseKit users reach for, and `always` reads as a continuation that receives every
// result, which `andThen` already is (except for its own token's cancellation; see below).

extension Future {
    /// Runs `cleanup` once the future has an outcome, whatever it is, then passes the result on.
    ///
    /// The cleanup that must run: stop a spinner, close a file, release a lease.
    ///
    /// ```swift
    /// let request = CancellationRequest()
    /// let data = Future(value: [UInt8]("body".utf8))
    ///     .ensure(cancellationToken: request.token) { print("spinner stopped") }
    /// ```
    ///
    /// ### Semantics
    /// - `cleanup` runs exactly once, on `context`, for every outcome: a value, an error, a source
    ///   that failed with `CancellationError` (cancelled by the token of the work behind it), and
    ///   `cancellationToken` cancelled first (also when it is already cancelled at the call).
    /// - The new future has the source's result, and completes after `cleanup` returned, so steps
    ///   chained after it run after the cleanup.
    /// - When `cancellationToken` is cancelled first, the new future fails with `CancellationError`
    ///   at once (as every combinator's), and `cleanup` runs on `context` right after: the token
    ///   stops the wait, never the cleanup.
    ///
    /// ### `ensure` and `andThen`
    /// ``andThen(on:cancellationToken:_:)-(ExecutionContext,_,_)`` also runs for a value and for an error, but it is a
    /// combinator like the others: its own token cancelled first skips its closure. `ensure` is the
    /// one whose closure runs on that outcome too.
    ///
    /// - Parameters:
    ///   - context: Where `cleanup` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` at once when cancelled
    ///     first; `cleanup` still runs.
    ///   - cleanup: The cleanup.
    /// - Returns: A future of the same result, or of `CancellationError` when the token fired first.
    @discardableResult
    public func ensure(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ cleanup: @escaping @Sendable () -> Void
    ) -> Future<Value> {
        let derived = Future<Value>()
        derived.cancelOnRequest(of: cancellationToken)
        // A continuation with a token is called exactly once, on `context`: with the result, or
        // with `CancellationError` when the token fires first (at once if it already has).
        onComplete(on: context, cancellationToken: cancellationToken) { result in
            cleanup()
            derived.complete(with: result)
        }
        return derived
    }

    /// Runs async `cleanup`, in a task, once the future has an outcome, whatever it is, then passes
    /// the result on.
    ///
    /// ```swift
    /// @Sendable func closeConnection() async {}
    /// let reply = Future(value: 200).ensure { await closeConnection() }
    /// ```
    ///
    /// ### Semantics
    /// As ``ensure(on:cancellationToken:_:)-7osj1``; `cleanup` runs in a task of its own
    /// whose jobs run on `context` (`.default` and `.synchronous` mean FutureLib's threads, never
    /// Swift's cooperative pool). The token does not cancel that task: cleanup is not work to
    /// abandon. The new future completes after `cleanup` returned, or at once with
    /// `CancellationError` when the token fired first.
    ///
    /// - Parameters:
    ///   - context: Where the task's jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the new future with `CancellationError` at once when cancelled
    ///     first; `cleanup` still runs.
    ///   - cleanup: The cleanup.
    /// - Returns: A future of the same result, or of `CancellationError` when the token fired first.
    @discardableResult
    public func ensure(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ cleanup: @escaping @Sendable @concurrent () async -> Void
    ) -> Future<Value> {
        ensure(at: .on(context), cancellationToken: cancellationToken, cleanup)
    }

    /// Runs `cleanup` on the main actor once the future has an outcome, whatever it is.
    ///
    /// ```swift
    /// @MainActor final class SpinnerModel {
    ///     var isSpinning = true
    ///     func load(_ work: Future<Int>) -> Future<Int> {
    ///         work.ensure(on: .mainActor) { self.isSpinning = false }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``ensure(on:cancellationToken:_:)-7osj1``; `cleanup` runs on the main actor.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` at once when cancelled
    ///     first; `cleanup` still runs.
    ///   - cleanup: The cleanup.
    /// - Returns: A future of the same result, or of `CancellationError` when the token fired first.
    @discardableResult
    public func ensure(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ cleanup: @escaping @MainActor () -> Void
    ) -> Future<Value> {
        ensure(on: context.queue, cancellationToken: cancellationToken) {
            MainActor.assumeIsolated { cleanup() }
        }
    }

    /// Runs async `cleanup` on the main actor once the future has an outcome, whatever it is.
    ///
    /// ```swift
    /// @MainActor final class UploadModel {
    ///     var status = ""
    ///     func track(_ upload: Future<Int>) {
    ///         upload.ensure(on: .mainActor) { @MainActor in
    ///             try? await Task.sleep(for: .milliseconds(1))
    ///             self.status = "done"
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``ensure(on:cancellationToken:_:)-tz5j``; the task runs on the main actor.
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the new future with `CancellationError` at once when cancelled
    ///     first; `cleanup` still runs.
    ///   - cleanup: The cleanup.
    /// - Returns: A future of the same result, or of `CancellationError` when the token fired first.
    @discardableResult
    public func ensure(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        _ cleanup: @escaping @MainActor () async -> Void
    ) -> Future<Value> {
        ensure(at: .mainActor, cancellationToken: cancellationToken) { await cleanup() }
    }

    /// The async forms: the task is started once, with the result or the token's
    /// `CancellationError`, and is not tied to the token.
    func ensure(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        _ cleanup: @escaping @Sendable () async -> Void
    ) -> Future<Value> {
        let derived = Future<Value>()
        derived.cancelOnRequest(of: cancellationToken)
        onComplete(on: .synchronous, cancellationToken: cancellationToken) { result in
            placement.start(cancellationToken: .none) {
                await cleanup()
                derived.complete(with: result)
            }
        }
        return derived
    }
}
