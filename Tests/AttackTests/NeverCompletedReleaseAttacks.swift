import Cancellation
import FutureLib
import Synchronization
import Testing

// Releasing a deep chain on a future that never completes, for every way such a future can be
// released other than a dropped promise (which `ScaleDepthAttacks` covers): the callback adapter
// whose operation dropped its callback, with and without a token; a stream's `first()` on a stream
// released unfinished; and a future kept only by its token's registration (`onComplete` with a
// token) whose request is dropped uncancelled. `AttackSize.depth` stages (10⁵; 10⁶ under
// `make stress`) on a 512 KB stack, each case in a child process: a stack overflow fails it.

/// Where the callback of a wrapped operation waits; `drop()` is the operation losing it.
final class CallbackHolder: Sendable {
    private let callback = Mutex<(@Sendable (Int?, (any Error)?) -> Void)?>(nil)

    func store(_ body: @escaping @Sendable (Int?, (any Error)?) -> Void) {
        callback.withLock { $0 = body }
    }

    /// Drops the callback (outside the lock: what it holds is released here).
    func drop() {
        let dropped = callback.withLock { $0.take() }
        _ = consume dropped
    }
}

enum NeverCompletedRoot: String, CaseIterable, Sendable, Codable {
    case adapter, adapterWithToken, streamFirst, tokenBox

    /// Builds `depth` `map` stages on a future of this kind that never completes, lets go of every
    /// reference but the one that keeps the root, then drops that: the whole chain must go.
    func releasesDeepChain() {
        let depth = AttackSize.depth
        let counter = ReleaseCounter()
        onSmallStack {
            let holder = CallbackHolder()
            var request: CancellationRequest? = CancellationRequest()
            var streamHolder: FutureStream<Int>? = nil
            var root: Future<Int>
            switch self {
            case .adapter:
                root = Future<Int>(method: { callback in holder.store(callback) })
            case .adapterWithToken:
                root = Future<Int>(cancellationToken: request!.token, method: { callback in holder.store(callback) })
            case .streamFirst:
                // A stream fed by an operation that dropped its callback: nobody finishes it.
                let stream = FutureStream<Int>(capacity: 0, method: { callback in holder.store(callback) })
                root = stream.first()
                streamHolder = stream
            case .tokenBox:
                // The operation drops its callback at once: only `root` holds the future.
                root = Future<Int>(method: { (_: @escaping @Sendable (Int?, (any Error)?) -> Void) in })
            }
            let probe = counter.make()
            var tail = root.map(on: .synchronous) {
                probe.touch()
                return $0
            }
            for _ in 0..<depth { tail = tail.map(on: .synchronous) { $0 + 1 } }
            switch self {
            case .adapter, .adapterWithToken:
                _ = consume root
                _ = consume tail
                request = nil
                holder.drop()  // the last reference to the root
            case .streamFirst:
                _ = consume root
                _ = consume tail
                holder.drop()
                streamHolder = nil  // the stream, never finished, and its subscriber, with `first`
            case .tokenBox:
                // The root is kept only by the registration of an `onComplete` with a token.
                root.onComplete(on: .synchronous, cancellationToken: request!.token) { _ in }
                _ = consume root
                _ = consume tail
                request = nil  // dropped uncancelled: the box lets go of the root
            }
            _ = consume probe
            withExtendedLifetime(streamHolder) {}
        }
        guard counter.released == 1 else { fatalError("\(self): the chain was not released") }
    }
}

extension Attacks {
    @Suite(.serialized, .timeLimit(.minutes(AttackLimit.minutes(10))))
    struct NeverCompletedReleaseAttacks {
        @Test func `a deep chain on an adapted future whose operation dropped its callback is released`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    NeverCompletedRoot.adapter.releasesDeepChain()
                }
            )
        }

        @Test func `a deep chain on an adapted future with a token, its callback dropped, is released`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    NeverCompletedRoot.adapterWithToken.releasesDeepChain()
                }
            )
        }

        @Test func `a deep chain on a stream's first() is released with the unfinished stream`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    NeverCompletedRoot.streamFirst.releasesDeepChain()
                }
            )
        }

        @Test func `a deep chain on a future kept by its token's registration is released with the request`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    NeverCompletedRoot.tokenBox.releasesDeepChain()
                }
            )
        }
    }
}
