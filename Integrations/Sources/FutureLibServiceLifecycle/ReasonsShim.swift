// TEMPORARY SHIM, removed when the cancellation-reasons change of the root package is merged: the names and
// meanings of that change, approximated outside the core (a timer gives no reason here).
import Synchronization

private let shimReasons = Mutex<[CancellationToken: any Error]>([:])

extension CancellationRequest {
    package func cancel(reason: any Error) {
        let first = shimReasons.withLock { reasons in
            guard reasons[token] == nil, !isCancellationRequested else { return false }
            reasons[token] = reason
            return true
        }
        if first { cancel() }
    }
}

extension CancellationToken {
    package var cancellationReason: (any Error)? {
        guard isCancellationRequested else { return nil }
        let stored: (any Error)? = shimReasons.withLock { $0[self] }
        return stored ?? CancellationError()
    }
}

package struct DeadlineExceededError: Error, Equatable {
    package init() {}
}
