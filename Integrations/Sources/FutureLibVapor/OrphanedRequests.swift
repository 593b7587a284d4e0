import NIOConcurrencyHelpers
import Synchronization
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
/// new request at the same address finds a `nil` reference, not its own). An adoption drops the entries whose
/// requests are gone whenever the table has doubled since the last time, so that the table holds at most about
/// twice the orphans alive, and an adoption costs amortized constant time however many stay alive.
enum OrphanedRequests {
    private struct Entry {
        weak var request: Request?
        let state: RequestState
    }

    private struct Table {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// The size at which the next adoption drops the gone entries.
        var dropsAt = 16
    }

    /// What an adoption let go of, to be released outside every lock: the states of the gone requests (releasing a
    /// state can release the handlers on its token), and the references to the live requests that looking at a weak
    /// reference makes (the last one of a request releases what its storage holds).
    struct Dropped {
        fileprivate(set) var states: [RequestState] = []
        fileprivate(set) var requests: [Request] = []
    }

    // NIO's lock, which ThreadSanitizer sees.
    private static let table = NIOLockedValueBox(Table())
    /// How many entries the table holds: a look-up skips the lock while there are none (no connection ever let a
    /// held request go, or the server is not observed).
    private static let size = Atomic<Int>(0)

    /// Keeps `state` for `request`.
    static func adopt(_ request: Request, state: RequestState) -> Dropped {
        table.withLockedValue { table in
            var dropped = Dropped()
            if table.entries.count >= table.dropsAt {
                for (key, entry) in table.entries {
                    if let live = entry.request {
                        dropped.requests.append(live)
                    } else {
                        dropped.states.append(entry.state)
                        table.entries[key] = nil
                    }
                }
                table.dropsAt = max(16, 2 * table.entries.count)
            }
            // A gone request's entry under the same identity (its memory now holds `request`) goes too.
            if let replaced = table.entries.updateValue(
                Entry(request: request, state: state),
                forKey: ObjectIdentifier(request)
            ) {
                dropped.states.append(replaced.state)
            }
            size.store(table.entries.count, ordering: .releasing)
            return dropped
        }
    }

    /// The state kept for `request`, if any.
    static func state(of request: Request) -> RequestState? {
        guard size.load(ordering: .acquiring) > 0 else { return nil }
        // The caller holds `request`: a weak reference to it that is loaded here cannot be its last reference.
        return table.withLockedValue { table in
            guard let entry = table.entries[ObjectIdentifier(request)], entry.request === request else { return nil }
            return entry.state
        }
    }

    /// How many entries the table holds now, the gone ones not yet dropped included.
    static var count: Int {
        table.withLockedValue { $0.entries.count }
    }
}
