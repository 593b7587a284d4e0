// The stage of an operator fed by two streams (`zip`, `combineLatest`): each stream's events
// drive one state machine, whose outbox the stage publishes. The operators differ only in their
// state; how the two streams are subscribed and left is this one function.

/// The state of a stage fed by two streams: what an event of the first or the second stream does
/// to it, and what the stage publishes then (appended to `outbox`, under the stage's lock).
@usableFromInline
protocol TwoSourceState: Sendable {
    /// The first stream's values.
    associatedtype A: Sendable
    /// The second stream's values.
    associatedtype B: Sendable

    /// An event of the first stream.
    mutating func first(_ event: StreamEvent<A>, into outbox: inout [StageOutput<(A, B)>])

    /// An event of the second stream.
    mutating func second(_ event: StreamEvent<B>, into outbox: inout [StageOutput<(A, B)>])
}

/// A stage that gets the events of `first` and `second` through `state` (a ``StageMachine``), as
/// large as the larger capacity of the two, cancelled by `cancellationToken`; released, it leaves
/// both streams. Inlinable, as the operators are: specialized in the client, `state`'s events are
/// direct calls.
@inlinable
func makeTwoSourceStage<State: TwoSourceState>(
    _ first: FutureStream<State.A>,
    _ second: FutureStream<State.B>,
    state: State,
    cancellationToken: CancellationToken
) -> FutureStream<(State.A, State.B)> {
    let stage = FutureStream<(State.A, State.B)>.makeStage(
        capacity: max(first.capacity, second.capacity),
        cancellationToken: cancellationToken
    )
    if stage.isFinished { return stage }
    let machine = StageMachine<State, (State.A, State.B)>(state)
    let detachFirst = first.feed(stage, cancellationToken: cancellationToken) { event, stage in
        machine.handle(stage) { state, outbox in state.first(event, into: &outbox) }
    }
    let detachSecond = second.feed(stage, cancellationToken: cancellationToken) { event, stage in
        machine.handle(stage) { state, outbox in state.second(event, into: &outbox) }
    }
    stage.installDetach {
        detachFirst?()
        detachSecond?()
    }
    return stage
}
