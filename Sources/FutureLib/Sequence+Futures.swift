import Synchronization

extension Sequence where Element: Sendable {
    /// Starts `task` for each element, at most `maxConcurrency` at a time, and collects the values in order.
    ///
    /// ```swift
    /// let pages: Future<[[UInt8]]> = urls.traverse(maxConcurrency: 4) { url in download(url) }
    /// ```
    ///
    /// ### Semantics
    /// - Tasks start in input order; never more than `maxConcurrency` are running (`nil`: no cap).
    ///   A slot frees when a task's future completes.
    /// - The values come in input order, whatever order the futures complete in.
    /// - Fails with the first failure in time, and then starts no more tasks.
    /// - A cancelled token fails it with `CancellationError` at once and starts no more tasks.
    ///   Running tasks are not cancelled by it unless they were given the token too.
    /// - Only the running tasks' futures are held, so memory apart from the values stays bounded
    ///   by the cap.
    /// - A `maxConcurrency` below 1 stops with a precondition failure that names the argument.
    ///
    /// - Parameters:
    ///   - context: Where `task` is called. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the result with `CancellationError` and stops starting tasks.
    ///   - maxConcurrency: The most tasks running at once, at least 1; `nil` for no cap.
    ///   - task: Starts the work for one element.
    /// - Returns: A future of all values, in input order.
    @inlinable
    public func traverse<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        maxConcurrency: Int? = nil,
        _ task: @escaping @Sendable (Element) -> Future<U>
    ) -> Future<[U]> {
        if let maxConcurrency {
            precondition(maxConcurrency >= 1, "traverse: maxConcurrency must be at least 1, got \(maxConcurrency)")
        }
        let traversal = Traversal(
            elements: Array(self),
            maxConcurrency: maxConcurrency ?? .max,
            context: context,
            cancellationToken: cancellationToken,
            task: task
        )
        traversal.start()
        return traversal.future
    }
}

extension Sequence {
    /// A future of all the values, in order; fails with the first failure in time.
    ///
    /// ```swift
    /// let users: Future<[User]> = ids.map { fetchUser($0) }.sequence()
    /// ```
    ///
    /// An empty sequence gives `[]`. A cancelled token fails it with `CancellationError` at once.
    ///
    /// - Parameter cancellationToken: Fails the result with `CancellationError` when cancelled first.
    /// - Returns: A future of every value in input order.
    @inlinable
    public func sequence<T: Sendable>(cancellationToken: CancellationToken = .none) -> Future<[T]>
    where Element == Future<T> {
        let futures = Array(self)
        let all = Future<[T]>()
        if all.failIfCancelled(cancellationToken) { return all }
        guard !futures.isEmpty else {
            all.complete(with: .success([]))
            return all
        }
        all.cancelOnRequest(of: cancellationToken)
        // Each value goes to its slot as it arrives: no continuation holds an input, so a pending
        // input that nobody else holds is released with what waits only on it.
        let gathering = Gathering<T, [T]>(all, count: futures.count) { $0 }
        for index in futures.indices {
            futures[index].gather(into: gathering, at: index, cancellationToken: cancellationToken)
        }
        return all
    }

    /// A future of every result, in order; it fails only when the token is cancelled.
    ///
    /// ```swift
    /// let outcomes = uploads.results()
    /// let failed = try await outcomes.value().filter { if case .failure = $0 { true } else { false } }
    /// ```
    ///
    /// - Parameter cancellationToken: Fails the result with `CancellationError` when cancelled first.
    /// - Returns: A future of every result in input order; `[]` for an empty sequence.
    @inlinable  // specialized in the caller, as `sequence()` is (callgrind `futurelib-results-pending`)
    public func results<T: Sendable>(cancellationToken: CancellationToken = .none) -> Future<[Result<T, any Error>]>
    where Element == Future<T> {
        let futures = Array(self)
        let all = Future<[Result<T, any Error>]>()
        if all.failIfCancelled(cancellationToken) { return all }
        guard !futures.isEmpty else {
            all.complete(with: .success([]))
            return all
        }
        all.cancelOnRequest(of: cancellationToken)
        // Each result goes to its slot as it arrives, as in `sequence()`: no continuation holds an input.
        let gathering = Gathering<Result<T, any Error>, [Result<T, any Error>]>(all, count: futures.count) { $0 }
        for index in futures.indices {
            let future = futures[index]
            if future.isCompleted, let result = future.result {
                gathering.store(result, at: index)
                continue
            }
            future.observe(
                on: .synchronous,
                cancellationToken: cancellationToken,
                .result { result in
                    // The token's cancellation also reaches here, with the future still pending:
                    // `all` has failed with CancellationError then.
                    guard !cancellationToken.isCancellationRequested else { return }
                    gathering.store(result, at: index)
                }
            )
        }
        return all
    }

    /// Combines all values, in input order, once every future succeeded.
    ///
    /// ```swift
    /// let total: Future<Int> = sizes.fold(initial: 0) { $0 + $1 }
    /// ```
    ///
    /// Fails with the first failure in time. An empty sequence gives `initial`.
    ///
    /// - Parameters:
    ///   - context: Where `combine` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Fails the result with `CancellationError` when cancelled first.
    ///   - initial: The starting value.
    ///   - combine: Adds one value to the running total; called in input order.
    /// - Returns: A future of the combined value.
    public func fold<T: Sendable, U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        initial: U,
        combine: @escaping @Sendable (U, T) throws -> U
    ) -> Future<U> where Element == Future<T> {
        sequence(cancellationToken: cancellationToken).map(on: context, cancellationToken: cancellationToken) {
            try $0.reduce(initial, combine)
        }
    }

    /// A future of whichever future completes first, success or failure.
    ///
    /// ```swift
    /// let fastest = [fetch(from: mirrorA), fetch(from: mirrorB)].firstCompleted()
    /// ```
    ///
    /// The others are not cancelled: give them a token and cancel it when this completes, or let
    /// ``Future/race(on:cancellationToken:_:)-(ExecutionContext,_,_)`` start them, which cancels and releases the losers.
    ///
    /// ### Semantics
    /// - The first result in time wins, success or failure; a cancelled token, before or while it
    ///   waits, fails it with `CancellationError` at once.
    /// - Once it has completed, its continuations are removed from the inputs still pending: an
    ///   input that lives long (a shutdown future raced against each request) keeps nothing of it.
    ///   Derive such an input once, not per call: a `map` of the shutdown future made for each
    ///   request is a new pending future whose own continuation stays on the shutdown future
    ///   until that completes.
    /// - An empty sequence fails with ``FutureError/noSuchElement``.
    ///
    /// - Parameter cancellationToken: Fails the result with `CancellationError` when cancelled first.
    /// - Returns: A future of the first result; failing with ``FutureError/noSuchElement`` for an
    ///   empty sequence.
    @inlinable  // specialized in the caller, as `sequence()` is (callgrind `futurelib-first-completed`)
    public func firstCompleted<T: Sendable>(cancellationToken: CancellationToken = .none) -> Future<T>
    where Element == Future<T> {
        let first = Future<T>()
        if first.failIfCancelled(cancellationToken) { return first }
        first.cancelOnRequest(of: cancellationToken)
        let forward: Callback<T> = .result { first.complete(with: $0) }  // shared by every future
        // The first result removes the continuations from the inputs still pending: a long-lived
        // input (a shutdown future raced against each request) keeps nothing of this.
        var decision = Decision()
        var isEmpty = true
        for future in self {
            isEmpty = false
            future.observe(until: &decision, forward)
            if first.isCompleted { break }
        }
        decision.removeWaiting(when: first)
        if isEmpty { first.complete(with: .failure(FutureError.noSuchElement)) }
        return first
    }

    /// A future of whichever future succeeds first; when every one fails, of the last failure.
    ///
    /// ```swift
    /// let bytes: Future<[UInt8]> = [fetch(from: mirrorA), fetch(from: mirrorB)].firstSuccess()
    /// let backup = try await [fetch(primaryURL), fetch(mirrorURL)].firstSuccess().value()
    /// ```
    ///
    /// The others are not cancelled: give them a token and cancel it when this completes.
    ///
    /// ### Semantics
    /// - The first success in time wins; failures before or after it do not matter.
    /// - When every input fails, it fails with the last failure to arrive. An input's
    ///   `CancellationError` counts as a failure like any other.
    /// - An empty sequence fails with ``FutureError/noSuchElement``.
    /// - A cancelled token, before or while it waits, fails it with `CancellationError` at once.
    /// - Once it has completed, however, its continuations are removed from the inputs still
    ///   pending: nothing of it is kept by an input that never completes.
    /// - O(n) in all: each failure counts one down; nothing rescans the inputs.
    ///
    /// - Parameter cancellationToken: Fails the result with `CancellationError` when cancelled first.
    /// - Returns: A future of the first success, or of the last failure in time; failing with
    ///   ``FutureError/noSuchElement`` for an empty sequence.
    @inlinable  // specialized in the caller, as `firstCompleted()` is
    public func firstSuccess<T: Sendable>(cancellationToken: CancellationToken = .none) -> Future<T>
    where Element == Future<T> {
        let first = Future<T>()
        if first.failIfCancelled(cancellationToken) { return first }
        let futures = Array(self)
        guard !futures.isEmpty else {
            first.complete(with: .failure(FutureError.noSuchElement))
            return first
        }
        first.cancelOnRequest(of: cancellationToken)
        // Decided once `first` completes (a success, the last failure or the token): removes the
        // continuations below from the inputs still pending.
        var decision = Decision()
        let failures = Countdown(futures.count)
        let settle: Callback<T> = .result { result in  // shared by every future
            // Decided already (before the decision removed this continuation).
            guard !first.isCompleted else { return }
            switch result {
            case .success: first.complete(with: result)
            case .failure: if failures.countDown() { first.complete(with: result) }  // the last failure
            }
        }
        for future in futures {
            future.observe(until: &decision, settle)
            if first.isCompleted { break }
        }
        decision.removeWaiting(when: first)
        return first
    }
}

// MARK: - Async closures

extension Sequence where Element: Sendable {
    /// Runs async `task` for each element, each in a task of its own, at most `maxConcurrency` at
    /// a time, and collects the values in order.
    ///
    /// ```swift
    /// let lengths: Future<[Int]> = ["a", "bb"].traverse(maxConcurrency: 2) { text in
    ///     try await Task.sleep(for: .milliseconds(1))
    ///     return text.count
    /// }
    /// ```
    ///
    /// ### Semantics
    /// As ``traverse(on:cancellationToken:maxConcurrency:_:)-(_,_,_,(Element)->Future<U>)``, with
    /// each `task` in a task whose jobs run on `context` (`.default` and `.synchronous`: FutureLib's
    /// own threads, never Swift's cooperative pool). The token also cancels the running tasks and
    /// fails the result with `CancellationError` at once.
    ///
    /// - Parameters:
    ///   - context: Where the tasks' jobs run. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels the running tasks, starts no more, and fails the result.
    ///   - maxConcurrency: The most tasks running at once, at least 1; `nil` for no cap.
    ///   - task: The work for one element.
    /// - Returns: A future of all values, in input order.
    @inlinable  // specialized in the caller, as `Future { async … }` is (`RoundsDriver 9-traverse`)
    public func traverse<U: Sendable>(
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        maxConcurrency: Int? = nil,
        _ task: @escaping @Sendable @concurrent (Element) async throws -> U
    ) -> Future<[U]> {
        let placement = TaskPlacement.on(context)
        return traverse(on: .synchronous, cancellationToken: cancellationToken, maxConcurrency: maxConcurrency) {
            element in
            let future = Future<U>()
            future.run(at: placement, cancellationToken: cancellationToken) { try await task(element) }
            return future
        }
    }
}

// MARK: - On the main actor

// A `@MainActor` closure, run on the main queue through the context form (see Internals.md,
// "One combinator, every form").

extension Sequence where Element: Sendable {
    /// Starts `task` for each element on the main actor, and collects the values in order.
    ///
    /// ```swift
    /// let pages: Future<[Int]> = [1, 2].traverse(on: .mainActor) { Future(value: $0 * 10) }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the result with `CancellationError` and stops starting tasks.
    ///   - maxConcurrency: The most tasks running at once, at least 1; `nil` for no cap.
    ///   - task: Starts the work for one element, on the main actor.
    /// - Returns: A future of all values, in input order.
    public func traverse<U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        maxConcurrency: Int? = nil,
        _ task: @escaping @MainActor (Element) -> Future<U>
    ) -> Future<[U]> {
        traverse(on: context.queue, cancellationToken: cancellationToken, maxConcurrency: maxConcurrency) { element in
            MainActor.assumeIsolated { task(element) }
        }
    }

    /// Combines the values in input order with `combine`, called on the main actor.
    ///
    /// ```swift
    /// let total: Future<Int> = [Future(value: 1), Future(value: 2)].fold(on: .mainActor, initial: 0) { $0 + $1 }
    /// ```
    ///
    /// - Parameters:
    ///   - context: `.mainActor`.
    ///   - cancellationToken: Fails the result with `CancellationError` when cancelled first.
    ///   - initial: The value to start from.
    ///   - combine: Adds one value to the accumulated one.
    /// - Returns: A future of the accumulated value.
    public func fold<T: Sendable, U: Sendable>(
        on context: MainActorExecutionContext,
        cancellationToken: CancellationToken = .none,
        initial: U,
        combine: @escaping @MainActor (U, T) throws -> U
    ) -> Future<U> where Element == Future<T> {
        fold(on: context.queue, cancellationToken: cancellationToken, initial: initial) { accumulated, value in
            try MainActor.assumeIsolated { try combine(accumulated, value) }
        }
    }
}
