import ConcurrencyHelpers
/// Where this module's blocking waits (``CancellationToken/wait(timeout:)``) tell the owner of the
/// calling thread that it blocks.
///
/// The module knows no thread pool; FutureLib's does: a pool thread that blocks without telling
/// it keeps work queued behind the wait (perhaps the very work that would end it) from running.
/// So FutureLib installs an observer here before it runs any work of its own, and the waits of
/// this module run inside it. Without one (a program that uses `Cancellation` alone), a wait just
/// blocks.
package protocol ThreadBlockingObserver: Sendable {
    /// Runs `wait`, which blocks the calling thread, and lets the thread's owner run other work
    /// meanwhile.
    func blocking<T>(_ wait: () throws -> T) rethrows -> T
}

package enum ThreadBlocking {
    private static let observer = Lock<(any ThreadBlockingObserver)?>(nil)

    /// Installs the observer of every later blocking wait; the last one installed wins.
    package static func install(_ newObserver: some ThreadBlockingObserver) {
        observer.withLock { $0 = newObserver }
    }

    /// Runs `wait` inside the installed observer, if any.
    package static func blocking<T>(_ wait: () throws -> T) rethrows -> T {
        guard let observer = observer.withLock({ $0 }) else { return try wait() }
        return try observer.blocking(wait)
    }
}
