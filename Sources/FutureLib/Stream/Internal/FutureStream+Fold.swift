// The path of the operators that end a stream in a future (`collect`, `reduce`, `last`,
// `contains`, `allSatisfy`): a subscription that folds the values into a state and completes
// the future with the answer, early or at the end; its synchronous form and its async one.

extension FutureStream {
    /// The path of the operators that end in a future: `step` runs with each value (on
    /// `context`, one call at a time, in order) and returns the answer when it is known early;
    /// `atEnd` gives it when the stream finishes. The first error (the stream's or a throw of
    /// `step`) fails the future. Decided, it unsubscribes and releases the link to the token.
    func fold<State: Sendable, U: Sendable>(
        on context: any ExecutionContext,
        cancellationToken: CancellationToken,
        into initialState: State,
        _ step: @escaping @Sendable (inout State, Value) throws -> U?,
        atEnd: @escaping @Sendable (State) -> Result<U, any Error>
    ) -> Future<U> {
        let future = Future<U>()
        if future.failIfCancelled(cancellationToken) { return future }
        // The subscription's own request, as in `first`: cancelling it unsubscribes.
        let subscription = CancellationRequest(linkedTo: [cancellationToken])
        let state = StageBox(initialState)
        subscribe(on: context, cancellationToken: subscription.token) { event in
            guard !future.isCompleted else { return }
            let decided: Result<U, any Error>
            switch event {
            case .result(.success(let value)):
                do {
                    guard let answer = try step(&state.value, value) else { return }
                    decided = .success(answer)
                } catch {
                    decided = .failure(error)
                }
            case .result(.failure(let error)): decided = .failure(error)
            case .finished: decided = atEnd(state.value)
            case .cancelled: decided = .failure(cancelledFailure)
            }
            future.complete(with: decided)
            subscription.cancel()  // decided: unsubscribe, and release the link to the caller's token
        }
        return future
    }

    /// ``fold(on:cancellationToken:into:_:atEnd:)`` for the async forms: `step` is awaited for
    /// each value, one call at a time, in order (``SerialJobs``).
    func fold<State: Sendable, U: Sendable>(
        at placement: TaskPlacement,
        cancellationToken: CancellationToken,
        into initialState: State,
        _ step: @escaping @Sendable (State, Value) async throws -> (State, U?),
        atEnd: @escaping @Sendable (State) -> Result<U, any Error>
    ) -> Future<U> {
        let future = Future<U>()
        if future.failIfCancelled(cancellationToken) { return future }
        // The subscription's own request, as in `fold(on:)`: cancelling it unsubscribes.
        let subscription = CancellationRequest(linkedTo: [cancellationToken])
        let state = StageBox(initialState)
        subscribe(at: placement, cancellationToken: subscription.token) { event in
            guard !future.isCompleted else { return }
            let decided: Result<U, any Error>
            switch event {
            case .result(.success(let value)):
                do {
                    let (next, answer) = try await step(state.value, value)
                    state.value = next
                    guard let answer else { return }
                    decided = .success(answer)
                } catch {
                    decided = .failure(error)
                }
            case .result(.failure(let error)): decided = .failure(error)
            case .finished: decided = atEnd(state.value)
            case .cancelled: decided = .failure(cancelledFailure)
            }
            future.complete(with: decided)
            subscription.cancel()  // decided: unsubscribe, and release the link to the caller's token
        }
        return future
    }
}
