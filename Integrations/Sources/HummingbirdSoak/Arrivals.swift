// The disconnecting clients close their socket once their handler runs: each waits for its request's handler to
// arrive, by number, before it leaves.
import NIOConcurrencyHelpers

/// Handlers that arrived, by request number, and the clients waiting for theirs.
final class Arrivals: Sendable {
    private struct State {
        var arrived: Set<Int> = []
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// The handler of request `number` runs.
    func arrive(_ number: Int) {
        let waiter = state.withLockedValue { state in
            guard let waiter = state.waiting.removeValue(forKey: number) else {
                state.arrived.insert(number)
                return CheckedContinuation<Void, Never>?.none
            }
            return waiter
        }
        waiter?.resume()
    }

    /// Returns once the handler of request `number` ran.
    func wait(for number: Int) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let arrived = state.withLockedValue { state in
                if state.arrived.remove(number) != nil { return true }
                state.waiting[number] = waiter
                return false
            }
            if arrived { waiter.resume() }
        }
    }
}
