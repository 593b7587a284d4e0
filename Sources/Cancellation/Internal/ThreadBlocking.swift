package import Dispatch  // package: the observer's wait takes a semaphore and a deadline
import Synchronization

/// Where this module's blocking waits (``CancellationToken/wait(timeout:)``) tell the owner of the
/// calling thread that it blocks.
///
/// The module knows no thread pool and no queue; FutureLib does: a pool thread, or a serial
/// queue, that blocks without telling FutureLib keeps work queued behind the wait (perhaps the
/// very work that would end it) from running. So FutureLib installs an observer here before it
/// runs any work of its own, and the waits of this module go through it. Without one (a program
/// that uses `Cancellation` alone), a wait just blocks.
package protocol ThreadBlockingObserver: Sendable {
    /// Blocks the calling thread until `isDone()`, which `semaphore` is signalled for, or until
    /// `deadline`; lets the thread's owner run other work meanwhile (on another thread, or on
    /// this one while it waits). Returns whether `isDone()`.
    func wait(for semaphore: DispatchSemaphore, until deadline: DispatchTime, isDone: () -> Bool) -> Bool
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

    /// Waits for `semaphore` until `deadline` through the installed observer, if any (see
    /// ``ThreadBlockingObserver/wait(for:until:isDone:)``); returns whether `isDone()`.
    package static func wait(
        for semaphore: DispatchSemaphore,
        until deadline: DispatchTime,
        isDone: () -> Bool
    ) -> Bool {
        guard let box = UnsafeRawPointer(bitPattern: installed.load(ordering: .acquiring)) else {
            return semaphore.wait(timeout: deadline) == .success || isDone()
        }
        return Unmanaged<Box>.fromOpaque(box).takeUnretainedValue().observer.wait(
            for: semaphore,
            until: deadline,
            isDone: isDone
        )
    }
}
