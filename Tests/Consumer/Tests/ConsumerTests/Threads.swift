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

/// Suspends until `condition` holds, polling; false after `seconds` of a quiet machine, load-scaled
/// (``Load``): a busy machine may keep the threads that bring the outcome from running for long.
func eventually(seconds: Double = 30, _ condition: @Sendable () -> Bool) async -> Bool {
    var counted = 0.0
    var last = ContinuousClock.now
    while !condition() {
        let now = ContinuousClock.now
        let (wholeSeconds, attoseconds) = (now - last).components
        counted += (Double(wholeSeconds) + Double(attoseconds) / 1e18) / Load.slowdown
        last = now
        if counted > seconds { return condition() }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}

/// The machine's load, for the bounds that tell a hang from a slow run (never a measurement): a
/// consumer's tests run beside other builds and sanitizer runs, which stretch every wait.
enum Load {
    /// The most a load stretches a bound: a hang still fails, at most ten times later.
    static let maximumSlowdown = 10.0

    /// The one-minute load average per processor, at least 1, at most ``maximumSlowdown``.
    static var slowdown: Double {
        var load = [0.0]
        guard getloadavg(&load, 1) == 1 else { return 1 }
        let perProcessor = load[0] / Double(max(1, ProcessInfo.processInfo.activeProcessorCount))
        return perProcessor > 1 ? min(perProcessor, maximumSlowdown) : 1  // 1 for NaN too
    }

    /// Minutes for a suite's `.timeLimit`: `minutes` of a quiet machine, times the load when the
    /// run started.
    static func minutes(_ minutes: Int) -> Int {
        Int((Double(minutes) * slowdown).rounded(.up))
    }

    /// A timeout for a wait that is meant to end before it: `duration` of a quiet machine, times
    /// ``maximumSlowdown`` (the wait returns as soon as its outcome comes).
    static func timeout(_ duration: Duration) -> Duration {
        duration * maximumSlowdown
    }
}
