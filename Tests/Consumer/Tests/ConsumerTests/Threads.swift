import Foundation
import Synchronization

/// A counter shared by threads. `Atomic`, which ThreadSanitizer sees, as a user's own code would
/// use (a `Mutex` of the standard library is invisible to TSan on Linux).
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)

    var value: Int { storage.load(ordering: .acquiring) }

    @discardableResult
    func increment() -> Int { storage.add(1, ordering: .acquiringAndReleasing).newValue }

    @discardableResult
    func decrement() -> Int { storage.subtract(1, ordering: .acquiringAndReleasing).newValue }
}

/// A plain, unsynchronized box: written on one thread and read on another only where FutureLib
/// promises an ordering between the two (a handler runs after `cancel()` was called, a
/// continuation after the promise was fulfilled). ThreadSanitizer reports a race on it if the
/// library does not make that ordering visible.
final class Payload: @unchecked Sendable {
    // Sendable: deliberately unsynchronized; the tests rely on FutureLib's happens-before edges.
    var value = 0
}

/// Runs `body(index)` on `count` new threads, started together through a spinning barrier, and
/// suspends (without blocking a cooperative thread) until every one returned.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    let arrived = Counter()
    let finished = Counter()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        for index in 0..<count {
            let thread = Thread {
                arrived.increment()
                while arrived.value < count { sched_yield() }
                body(index)
                if finished.increment() == count { continuation.resume() }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}

/// Suspends until `condition` holds, polling; false after `seconds`.
func eventually(seconds: Double = 30, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}
