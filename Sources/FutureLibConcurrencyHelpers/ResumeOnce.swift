import Synchronization

/// A continuation that may be resumed from several racing places (a cancellation handler, a
/// task-cancellation handler) of which exactly one must win.
///
/// The continuation is taken out under the lock and resumed after the lock is released.
package final class ResumeOnce: Sendable {
    private let continuation = Lock<CheckedContinuation<Void, Never>?>(nil)
    /// Set when `resume()` came before `install(_:)`.
    private let resumedEarly = Atomic<Bool>(false)

    package init() {}

    /// Stores the continuation, or resumes it at once if `resume()` already happened.
    package func install(_ newContinuation: CheckedContinuation<Void, Never>) {
        let resumeNow = continuation.withLock { stored -> Bool in
            if resumedEarly.load(ordering: .relaxed) { return true }  // read under the lock: ordered with `resume`
            stored = newContinuation
            return false
        }
        if resumeNow { newContinuation.resume() }
    }

    /// Resumes the stored continuation once; later calls do nothing.
    package func resume() {
        let taken = continuation.withLock { stored in
            resumedEarly.store(true, ordering: .relaxed)
            defer { stored = nil }
            return stored
        }
        taken?.resume()
    }
}
