import Synchronization

/// A `Clock` for swift-async-algorithms' `debounce`, moved in step with a `ManualClock`, that keeps
/// each `sleep(until:tolerance:)` in a list until an advance reaches its deadline. So the test can
/// tell when debounce's task is asleep (``sleeperCount``), and advance only then.
final class SleepingClock: Clock {
    typealias Instant = OracleClock.Instant

    private struct Sleeper {
        let id: Int
        let deadline: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Duration.zero
        var nextID = 0
        var sleepers: [Sleeper] = []
        /// Sleeps cancelled before their continuation was kept.
        var cancelled: Set<Int> = []
    }

    private let state = Mutex(State())

    init() {}

    var now: Instant { Instant(offset: state.withLock { $0.now }) }
    var minimumResolution: Duration { .zero }

    /// How many sleeps wait for an advance.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Moves the time, and wakes (outside the lock) the sleeps it reaches.
    func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now += duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Returns at once when `deadline` has passed; else waits in the list for an advance.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let isDue = state.withLock { state -> Bool? in
                    if state.cancelled.remove(id) != nil { return nil }
                    if deadline.offset <= state.now { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline.offset, continuation: continuation))
                    return false
                }
                switch isDue {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: continuation.resume()
                case false?: Changes.shared.notify()
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
