public import FutureLib

/// A stream operator that takes a closure, applied to a `FutureStream<Int>`: the one way the tests
/// enumerate them, as ``FutureCombinator`` does the future combinators.
///
/// `touch` is called from the operator's closure, once per call; what it returns is the value a
/// closure that makes one gives (`recover`'s value, `filter`'s `> 0`), so a test counts the calls
/// and sees their order.
public enum StreamCombinator: String, CaseIterable, Sendable, Codable {
    case map, filter, flatMapFuture, flatMapStream, recover, recoverWith, recoverWithStream, mapError, andThen

    /// The operator on `stream`, its closure on `context`.
    public func apply(
        to stream: FutureStream<Int>,
        on context: some ExecutionContext = .synchronous,
        cancellationToken token: CancellationToken = .none,
        _ touch: @escaping @Sendable () -> Int
    ) -> FutureStream<Int> {
        switch self {
        case .map:
            stream.map(on: context, cancellationToken: token) {
                _ = touch()
                return $0
            }
        case .filter: stream.filter(on: context, cancellationToken: token) { _ in touch() > 0 }
        case .flatMapFuture:
            stream.flatMap(on: context, cancellationToken: token) {
                _ = touch()
                return Future(value: $0)
            }
        case .flatMapStream:
            stream.flatMap(on: context, cancellationToken: token) { value -> FutureStream<Int> in
                _ = touch()
                let inner = StreamPromise<Int>(capacity: 1)
                inner.fulfill(value)
                return inner.stream
            }
        case .recover: stream.recover(on: context, cancellationToken: token) { _ in touch() }
        case .recoverWith: stream.recoverWith(on: context, cancellationToken: token) { _ in Future(value: touch()) }
        case .recoverWithStream:
            stream.recoverWith(on: context, cancellationToken: token) { _ in FutureStream(value: touch()) }
        case .mapError:
            stream.mapError(on: context, cancellationToken: token) {
                _ = touch()
                return $0
            }
        case .andThen: stream.andThen(on: context, cancellationToken: token) { _ in _ = touch() }
        }
    }
}
