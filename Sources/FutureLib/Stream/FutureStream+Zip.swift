// `zip`: the values of two or three streams, paired by position.

/// Pairs the values of two streams by position: the first of each, then the second of each, …
///
/// ```swift
/// let names = StreamPromise<String>()
/// let scores = StreamPromise<Int>()
/// let rows: FutureStream<(String, Int)> = zip(names.stream, scores.stream)
/// ```
///
/// ```
/// first:   a     b  c     |
/// second:     1        2  ✕  3  |
/// output:    (a,1)   (b,2)✕ (c,3)|
/// ```
///
/// ### Semantics (swift-async-algorithms' `zip`)
/// - A pair is published as soon as both streams have a value at its position; values that
///   wait for their partner are kept by the zip (a faster stream's values queue up).
/// - It finishes when either stream has finished and none of its values waits for a partner:
///   no pair can follow. Values of the other stream still waiting are dropped, and the zip
///   leaves both streams.
/// - An error of either stream is published at once and takes no position (values are paired;
///   errors pass through, as with `map`), and the zip goes on. (swift-async-algorithms ends at
///   the first error; so does a `for try await` loop over `values`.)
/// - `cancellationToken` cancelled: one `CancellationError`, the end, both streams left and the
///   waiting values released. It keeps as many results as the larger capacity of the two.
///
/// - Parameters:
///   - first: The stream of first elements.
///   - second: The stream of second elements.
///   - cancellationToken: Cancels and finishes the new stream.
/// - Returns: A stream of pairs.
@inlinable
public func zip<A: Sendable, B: Sendable>(
    _ first: FutureStream<A>,
    _ second: FutureStream<B>,
    cancellationToken: CancellationToken = .none
) -> FutureStream<(A, B)> {
    makeTwoSourceStage(first, second, state: Zip2State(), cancellationToken: cancellationToken)
}

/// Groups the values of three streams by position.
///
/// ```swift
/// let xs = StreamPromise<Double>()
/// let ys = StreamPromise<Double>()
/// let zs = StreamPromise<Double>()
/// let points: FutureStream<(Double, Double, Double)> = zip(xs.stream, ys.stream, zs.stream)
/// ```
///
/// ### Semantics
/// As `zip(_:_:cancellationToken:)`: a triple once all three have a value at its position; the
/// end once any stream has finished with no value waiting; errors pass through.
///
/// - Parameters:
///   - first: The stream of first elements.
///   - second: The stream of second elements.
///   - third: The stream of third elements.
///   - cancellationToken: Cancels and finishes the new stream.
/// - Returns: A stream of triples.
@inlinable
public func zip<A: Sendable, B: Sendable, C: Sendable>(
    _ first: FutureStream<A>,
    _ second: FutureStream<B>,
    _ third: FutureStream<C>,
    cancellationToken: CancellationToken = .none
) -> FutureStream<(A, B, C)> {
    // A pair of the first two, zipped with the third: the same positions, ends and errors.
    zip(zip(first, second, cancellationToken: cancellationToken), third, cancellationToken: cancellationToken)
        .map(on: .synchronous, cancellationToken: cancellationToken) { pair, third in (pair.0, pair.1, third) }
}

/// `zip`'s state: the values waiting for a partner, and which streams have finished.
@usableFromInline
struct Zip2State<A: Sendable, B: Sendable>: TwoSourceState {
    @usableFromInline var firsts = WaitingValues<A>()
    @usableFromInline var seconds = WaitingValues<B>()
    @usableFromInline var isFirstFinished = false
    @usableFromInline var isSecondFinished = false
    @usableFromInline var isDone = false

    @inlinable
    init() {}

    @inlinable
    mutating func first(_ event: StreamEvent<A>, into outbox: inout [StageOutput<(A, B)>]) {
        guard !isDone else { return }
        switch event {
        case .result(.success(let value)):
            if let partner = seconds.popFirst() {
                outbox.append(.result(.success((value, partner))))
            } else {
                firsts.append(value)
            }
        case .result(.failure(let error)): outbox.append(.result(.failure(error)))
        case .finished: isFirstFinished = true
        case .cancelled: return
        }
        endIfExhausted(into: &outbox)
    }

    @inlinable
    mutating func second(_ event: StreamEvent<B>, into outbox: inout [StageOutput<(A, B)>]) {
        guard !isDone else { return }
        switch event {
        case .result(.success(let value)):
            if let partner = firsts.popFirst() {
                outbox.append(.result(.success((partner, value))))
            } else {
                seconds.append(value)
            }
        case .result(.failure(let error)): outbox.append(.result(.failure(error)))
        case .finished: isSecondFinished = true
        case .cancelled: return
        }
        endIfExhausted(into: &outbox)
    }

    /// Ends the zip once a finished stream has no value left to pair.
    @inlinable
    mutating func endIfExhausted(into outbox: inout [StageOutput<(A, B)>]) {
        guard (isFirstFinished && firsts.isEmpty) || (isSecondFinished && seconds.isEmpty) else { return }
        isDone = true
        firsts.removeAll()
        seconds.removeAll()
        outbox.append(.finish)
    }
}
