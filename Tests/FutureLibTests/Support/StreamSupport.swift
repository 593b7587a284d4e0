import FutureLib
import TestSupport

/// Records what one stream subscriber saw, in order: values, errors and the end.
final class StreamRecorder<Value: Sendable>: Sendable {
    enum Entry: Sendable {
        case value(Value)
        case error(any Error)
    }

    private let recorded = Locked<[Entry]>([])
    private let finishedPromise = Promise<Void>()

    init() {}

    /// Subscribes with `onComplete` and `onFinish` on `context`.
    @discardableResult
    func record(
        _ stream: FutureStream<Value>,
        on context: some ExecutionContext = .synchronous,
        cancellationToken: CancellationToken = .none
    ) -> Self {
        stream.onComplete(on: context, cancellationToken: cancellationToken) { [self] in append($0) }
        stream.onFinish(on: context) { [finishedPromise] in finishedPromise.fulfill(()) }
        return self
    }

    func append(_ result: Result<Value, any Error>) {
        recorded.withLock {
            switch result {
            case .success(let value): $0.append(.value(value))
            case .failure(let error): $0.append(.error(error))
            }
        }
    }

    var entries: [Entry] { recorded.value }

    var values: [Value] {
        entries.compactMap { if case .value(let value) = $0 { value } else { nil } }
    }

    var errors: [any Error] {
        entries.compactMap { if case .error(let error) = $0 { error } else { nil } }
    }

    var isFinished: Bool { finishedPromise.future.isCompleted }

    /// Suspends until the stream finished (`onFinish` ran).
    func finished() async {
        _ = try? await finishedPromise.future.value()
    }
}

extension FutureStream {
    /// Suspends until the stream finished.
    func finished() async {
        let done = Promise<Void>()
        onFinish(on: .synchronous) { done.fulfill(()) }
        _ = try? await done.future.value()
    }
}
