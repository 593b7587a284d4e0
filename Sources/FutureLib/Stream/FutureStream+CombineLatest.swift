// `combineLatest`: the latest value of each of two or three streams, whenever one changes.

/// The latest value of each stream, published whenever either has a new one (once both have
/// one).
///
/// ```swift
/// let width = StreamPromise<Int>()
/// let height = StreamPromise<Int>()
/// let area = combineLatest(width.stream, height.stream).map { $0 * $1 }
/// ```
///
/// ```
/// first:   a        b     |
/// second:     1  2     ✕     3  |
/// output:   (a,1)(a,2)(b,2)✕ (b,3)|
/// ```
///
/// ### Semantics (swift-async-algorithms' `combineLatest`)
/// - Nothing is published until both streams have had a value; then every new value of either
///   is published with the latest value of the other.
/// - It finishes when a stream finishes without having had a value (no pair can follow), or
///   else when both have finished; then it leaves both streams.
/// - An error of either stream is published at once and changes no latest value; the stream
///   goes on. (swift-async-algorithms ends at the first error; so does a `for try await` loop.)
/// - `cancellationToken` cancelled: one `CancellationError`, the end, both streams left.
///   It keeps as many results as the larger capacity of the two.
///
/// - Parameters:
///   - first: The stream of first elements.
///   - second: The stream of second elements.
///   - cancellationToken: Cancels and finishes the new stream.
/// - Returns: A stream of the latest pairs.
@inlinable
public func combineLatest<A: Sendable, B: Sendable>(
    _ first: FutureStream<A>,
    _ second: FutureStream<B>,
    cancellationToken: CancellationToken = .none
) -> FutureStream<(A, B)> {
    makeTwoSourceStage(first, second, state: CombineLatest2State(), cancellationToken: cancellationToken)
}

/// The latest value of each of three streams, whenever one has a new one (once all have one).
///
/// ```swift
/// let red = StreamPromise<Int>()
/// let green = StreamPromise<Int>()
/// let blue = StreamPromise<Int>()
/// let colors: FutureStream<(Int, Int, Int)> = combineLatest(red.stream, green.stream, blue.stream)
/// ```
///
/// ### Semantics
/// As `combineLatest(_:_:cancellationToken:)`, for three streams.
///
/// - Parameters:
///   - first: The stream of first elements.
///   - second: The stream of second elements.
///   - third: The stream of third elements.
///   - cancellationToken: Cancels and finishes the new stream.
/// - Returns: A stream of the latest triples.
@inlinable
public func combineLatest<A: Sendable, B: Sendable, C: Sendable>(
    _ first: FutureStream<A>,
    _ second: FutureStream<B>,
    _ third: FutureStream<C>,
    cancellationToken: CancellationToken = .none
) -> FutureStream<(A, B, C)> {
    // The latest pair of the first two, combined with the third: the same values and ends (a pair
    // exists once both have a value; the pair stream ends without one exactly when one of them does).
    combineLatest(
        combineLatest(first, second, cancellationToken: cancellationToken),
        third,
        cancellationToken: cancellationToken
    )
    .map(on: .synchronous, cancellationToken: cancellationToken) { pair, third in (pair.0, pair.1, third) }
}

/// `combineLatest`'s state: the latest value of each stream, and which have finished.
@usableFromInline
struct CombineLatest2State<A: Sendable, B: Sendable>: TwoSourceState {
    @usableFromInline var latestFirst: A?
    @usableFromInline var latestSecond: B?
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
            latestFirst = value
            if let latestSecond { outbox.append(.result(.success((value, latestSecond)))) }
        case .result(.failure(let error)): outbox.append(.result(.failure(error)))
        case .finished:
            isFirstFinished = true
            if latestFirst == nil || isSecondFinished { end(into: &outbox) }
        case .cancelled: return
        }
    }

    @inlinable
    mutating func second(_ event: StreamEvent<B>, into outbox: inout [StageOutput<(A, B)>]) {
        guard !isDone else { return }
        switch event {
        case .result(.success(let value)):
            latestSecond = value
            if let latestFirst { outbox.append(.result(.success((latestFirst, value)))) }
        case .result(.failure(let error)): outbox.append(.result(.failure(error)))
        case .finished:
            isSecondFinished = true
            if latestSecond == nil || isFirstFinished { end(into: &outbox) }
        case .cancelled: return
        }
    }

    @inlinable
    mutating func end(into outbox: inout [StageOutput<(A, B)>]) {
        isDone = true
        latestFirst = nil
        latestSecond = nil
        outbox.append(.finish)
    }
}
