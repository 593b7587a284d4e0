public import Synchronization  // public: `Countdown` is used by inlinable code

/// Completes with `values()` once every source succeeded, or with the first failure in time.
func gather<T: Sendable>(
    _ sources: [any CompletionSource],
    cancellationToken: CancellationToken,
    values: @escaping @Sendable () -> Result<T, any Error>
) -> Future<T> {
    let gathered = Future<T>()
    if gathered.failIfCancelled(cancellationToken) { return gathered }
    guard !sources.isEmpty else {
        gathered.complete(with: values())  // the empty tuple
        return gathered
    }
    gathered.cancelOnRequest(of: cancellationToken)
    let remaining = Countdown(sources.count)
    let body: @Sendable ((any Error)?) -> Void = { error in  // shared by every source
        if let error {
            gathered.complete(with: .failure(error))  // the first failure in time wins
        } else if remaining.countDown() {
            gathered.complete(with: values())
        }
    }
    for source in sources {
        source.onCompletion(cancellationToken: cancellationToken, body)
    }
    return gathered
}

/// A future seen without its value type: enough to learn that it completed, and how.
protocol CompletionSource: Sendable {
    /// Calls `body` on completion with nil for a success or the error, synchronously.
    func onCompletion(cancellationToken: CancellationToken, _ body: @escaping @Sendable ((any Error)?) -> Void)
}

extension Future: CompletionSource {
    func onCompletion(cancellationToken: CancellationToken, _ body: @escaping @Sendable ((any Error)?) -> Void) {
        observe(
            on: .synchronous,
            cancellationToken: cancellationToken,
            .result { result in
                if case .failure(let error) = result { body(error) } else { body(nil) }
            }
        )
    }
}

/// Counts completions down to zero from any thread.
@usableFromInline
final class Countdown: Sendable {
    @usableFromInline let remaining: Atomic<Int>

    @inlinable
    init(_ count: Int) {
        remaining = Atomic(count)
    }

    /// Counts one down; true for the call that reached zero. Acquiring and releasing, so the
    /// last caller sees everything the others did before counting.
    @inlinable
    func countDown() -> Bool {
        remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0
    }
}
