import Synchronization

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
    /// The address of the installed observer's box, 0 while none is; an atomic rather than a lock,
    /// so that it needs nothing but the standard library (and ThreadSanitizer sees the ordering).
    private static let installed = Atomic<UInt>(0)

    private final class Box: Sendable {
        let observer: any ThreadBlockingObserver

        init(_ observer: any ThreadBlockingObserver) {
            self.observer = observer
        }
    }

    /// Installs the observer of every later blocking wait; the last one installed wins. Meant to
    /// be called once per process: a replaced observer is never freed (a wait may still use it).
    package static func install(_ observer: some ThreadBlockingObserver) {
        let box = UInt(bitPattern: Unmanaged.passRetained(Box(observer)).toOpaque())
        _ = installed.exchange(box, ordering: .acquiringAndReleasing)
    }

    /// Runs `wait` inside the installed observer, if any.
    package static func blocking<T>(_ wait: () throws -> T) rethrows -> T {
        guard let box = UnsafeRawPointer(bitPattern: installed.load(ordering: .acquiring)) else { return try wait() }
        return try Unmanaged<Box>.fromOpaque(box).takeUnretainedValue().observer.blocking(wait)
    }
}
