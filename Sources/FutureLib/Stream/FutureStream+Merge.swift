public import FutureLibConcurrencyHelpers  // public: inlinable code uses its lock

// `merge`: the results of several streams of one type, as they arrive.

/// The results of every stream in `streams`, as they arrive; the end once every one has ended.
///
/// ```swift
/// let indoor = StreamPromise<Double>()
/// let outdoor = StreamPromise<Double>()
/// let readings = merge(indoor.stream, outdoor.stream)
/// ```
///
/// ```
/// first:   1     3        |
/// second:     2     ✕  4     |
/// output:  1  2  3  ✕  4     |
/// ```
///
/// ### Semantics (swift-async-algorithms' `merge`, for any number of streams)
/// - Each stream's results keep their order; results of different streams interleave as they
///   arrive. Each stream's kept results (its ``FutureStream/capacity``) come first, as for any
///   subscriber; the new stream keeps as many as the largest capacity among `streams`.
/// - It finishes when every stream has finished; `merge()` of no stream has finished.
/// - An error of any stream is a result of the new stream, which goes on: in FutureLib an error
///   does not end a stream. (swift-async-algorithms ends the merge at the first error; so does a
///   `for try await` loop over the new stream's `values`.)
/// - `cancellationToken` cancelled: one `CancellationError`, the end, and every stream is left.
///   A merged stream that nobody holds or subscribes to leaves every stream, as a `map` does.
///
/// - Parameters:
///   - streams: The streams to merge.
///   - cancellationToken: Cancels and finishes the new stream.
/// - Returns: A stream of every stream's results.
@inlinable
public func merge<Value: Sendable>(
    _ streams: FutureStream<Value>...,
    cancellationToken: CancellationToken = .none
) -> FutureStream<Value> {
    merge(streams, cancellationToken: cancellationToken)
}

/// The results of every stream of an array, as they arrive; the end once every one has ended.
///
/// ```swift
/// let sensors = (0..<4).map { _ in StreamPromise<Double>() }
/// let readings = merge(sensors.map(\.stream))
/// ```
///
/// ### Semantics
/// As `merge(_:cancellationToken:)` with a list of streams.
///
/// - Parameters:
///   - streams: The streams to merge.
///   - cancellationToken: Cancels and finishes the new stream.
/// - Returns: A stream of every stream's results.
@inlinable
public func merge<Value: Sendable>(
    _ streams: [FutureStream<Value>],
    cancellationToken: CancellationToken = .none
) -> FutureStream<Value> {
    let merged = FutureStream<Value>.makeStage(
        capacity: streams.lazy.map(\.capacity).max() ?? 0,
        cancellationToken: cancellationToken
    )
    if merged.isFinished { return merged }
    guard !streams.isEmpty else {
        merged.finish()
        return merged
    }
    let running = MergeCountdown(streams.count)
    var detaches: [@Sendable () -> Void] = []
    for stream in streams {
        // Each stream's results go straight to the merged stream, in its order: all of them before
        // its end, so none comes after the last end.
        let detach = stream.feed(merged, cancellationToken: cancellationToken) { event, merged in
            switch event {
            case .result(let result): merged.publish(result)
            case .finished: if running.end() { merged.finish() }
            case .cancelled: break  // the merged stream is cancelled by the same token
            }
        }
        if let detach { detaches.append(detach) }
    }
    merged.installDetach { [detaches] in for detach in detaches { detach() } }
    return merged
}

/// How many of `merge`'s streams have not finished.
@usableFromInline
final class MergeCountdown: Sendable {
    @usableFromInline let running: Lock<Int>

    @inlinable
    init(_ count: Int) {
        running = Lock(count)
    }

    /// One stream finished; true for the last one.
    @inlinable
    func end() -> Bool {
        running.withLock { running in
            running -= 1
            return running == 0
        }
    }
}
