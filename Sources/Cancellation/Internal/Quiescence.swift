import FutureLibConcurrencyHelpers
import Synchronization

/// The link between `await ManualClock.advanceAndSettle(by:)` and the library that runs work for the code
/// under test (FutureLib), which this module does not know.
///
/// `advanceAndSettle(by:)` waits, before each timer and before it returns, until the work in
/// flight on that library's own contexts has finished: FutureLib installs the wait
/// (``install(_:)``) the first time it has anything in flight. ``manualClockCreated`` tells that
/// library that a test moves time by hand, so that it counts the work it counts only then.
package enum Quiescence {
    /// Suspends until the installed library has no work in flight.
    package typealias Wait = @Sendable () async -> Void

    private static let installed = Lock<Wait?>(nil)

    /// Whether a ``ManualClock`` has been created in this process: set once, never cleared.
    private static let clockCreated = Atomic<Bool>(false)

    /// Installs the wait; a later call replaces it.
    package static func install(_ wait: @escaping Wait) {
        installed.withLock { $0 = wait }
    }

    /// Whether a ``ManualClock`` exists or existed in this process. A relaxed load: the flag is set
    /// when the clock is created, before the code under test runs.
    package static var manualClockCreated: Bool {
        clockCreated.load(ordering: .relaxed)
    }

    static func noteManualClock() {
        clockCreated.store(true, ordering: .relaxed)
    }

    /// Waits until the installed library has no work in flight; returns at once if none is installed.
    static func wait() async {
        guard let wait = installed.withLock({ $0 }) else { return }
        await wait()
    }
}
