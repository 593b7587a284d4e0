import NIOConcurrencyHelpers
import Vapor

/// The states of the requests that an observed connection let go of while something else still held them: the
/// requests in flight when the connection ended, and a request that a task still holds when the next request on
/// its connection starts. `request.cancellation` finds them here once their connection no longer lists them.
///
/// Not in the request's `storage`: Vapor's `Request.storage` is read, changed and written back in two separate
/// locked steps, so a write from the connection's event loop at that moment could undo one the route's task makes
/// at the same time (or the other way round), and the connection's end is exactly when routes are still running.
///
/// Each entry holds its request weakly, keyed by the request's identity: a request that is gone matches nothing (a
/// new request at the same address finds a `nil` reference, not its own), and each adoption first drops the
/// entries whose requests are gone, so the table holds no more than the orphans alive at the last adoption.
enum OrphanedRequests {
    private struct Entry {
        weak var request: Request?
        let state: RequestState
    }

    // NIO's lock, which ThreadSanitizer sees.
    private static let entries = NIOLockedValueBox<[ObjectIdentifier: Entry]>([:])

    /// Keeps `state` for `request`; returns the states of the requests that are gone, for their release outside
    /// any lock (releasing a state can release the handlers on its token).
    static func adopt(_ request: Request, state: RequestState) -> [RequestState] {
        entries.withLockedValue { entries in
            let goneKeys = entries.compactMap { key, entry in entry.request == nil ? key : nil }
            let gone = goneKeys.compactMap { entries.removeValue(forKey: $0)?.state }
            entries[ObjectIdentifier(request)] = Entry(request: request, state: state)
            return gone
        }
    }

    /// The state kept for `request`, if any.
    static func state(of request: Request) -> RequestState? {
        entries.withLockedValue { entries in
            guard let entry = entries[ObjectIdentifier(request)], entry.request === request else { return nil }
            return entry.state
        }
    }

    /// How many entries the table holds now, the gone ones not yet dropped included.
    static var count: Int {
        entries.withLockedValue { $0.count }
    }
}
