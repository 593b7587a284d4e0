import FutureLib
import FutureTestSupport
import TestSupport

/// Records what one stream subscriber saw, in order: values, errors and the end.
final class StreamRecorder<Value: Sendable>: Sendable {
    enum Entry: Sendable {
        case value(Value)
        case error(any Error)
    }

    private let recorded = Locked<[Entry]>([])
    private let finishedPromise = Promise<Void>()
    /// Fulfilled when the stream released the `onComplete` handler: after its last delivery (on a
    /// concurrent context the `onFinish` handler, a subscriber of its own, may run before that).
    private let releasedPromise = Promise<Void>()

    init() {}

    /// Subscribes with `onComplete` and `onFinish` on `context`.
    @discardableResult
    func record(
        _ stream: FutureStream<Value>,
        on context: some ExecutionContext = .synchronous,
        cancellationToken: CancellationToken = .none
    ) -> Self {
        let release = ReleaseSignal(releasedPromise)
        stream.onComplete(on: context, cancellationToken: cancellationToken) { [self] result in
            withExtendedLifetime(release) { append(result) }
        }
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

    /// Suspends until the stream finished (`onFinish` ran) and every result reached the handler
    /// (the stream released it).
    func finished() async {
        _ = try? await finishedPromise.future.value()
        _ = try? await releasedPromise.future.value()
    }
}

/// Fulfills a promise when released: tells when a stream let go of a handler that captured it.
private final class ReleaseSignal: Sendable {
    private let promise: Promise<Void>

    init(_ promise: Promise<Void>) {
        self.promise = promise
    }

    deinit {
        promise.tryFulfill(())
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

/// Suspends until `condition` holds: for handlers of separate subscribers (or tasks), whose
/// relative order no rule fixes. The suite's time limit ends a wait that never succeeds.
func waitUntil(_ condition: @Sendable () async -> Bool) async {
    while await !condition() {
        try? await Task.sleep(for: .milliseconds(1))
    }
}

/// Counts the calls of a closure that overlapped another call of it: an operator that runs its
/// async closure one call at a time leaves ``overlaps`` at 0.
final class OverlapProbe: Sendable {
    private let running = Locked(0)
    private let count = Counter()

    /// How many calls found another one running.
    var overlaps: Int { count.value }

    /// Enters, yields (so that another call could start meanwhile) and leaves: a call's body.
    func yieldInside() async {
        if running.withLock({
            $0 += 1
            return $0
        }) > 1 {
            count.increment()
        }
        await Task.yield()
        running.withLock { $0 -= 1 }
    }
}
