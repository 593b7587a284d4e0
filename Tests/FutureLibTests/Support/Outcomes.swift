import Dispatch
import FutureLib

/// An error the tests fail futures with, told apart by its code.
struct TestFailure: Error, Equatable {
    var code = 1
}

/// The future's result, awaited without blocking a thread (never throws).
func settled<T>(_ future: Future<T>) async -> Result<T, any Error> {
    do {
        return .success(try await future.value())
    } catch {
        return .failure(error)
    }
}

extension Result {
    /// Whether this is a failure with `CancellationError`.
    var isCancellation: Bool {
        if case .failure(let error) = self { return error is CancellationError }
        return false
    }

    /// The error of a failure, as `FutureError`, if it is one.
    var futureError: FutureError? {
        if case .failure(let error) = self { return error as? FutureError }
        return nil
    }

    /// The error of a failure, as `TestFailure`, if it is one.
    var testFailure: TestFailure? {
        if case .failure(let error) = self { return error as? TestFailure }
        return nil
    }

    /// The value of a success.
    var successValue: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

/// A serial queue that can tell whether code runs on it (a `DispatchSpecificKey`), to check the
/// context a continuation ran on.
final class ProbedQueue: Sendable {
    let queue: DispatchQueue
    private let key = DispatchSpecificKey<Int>()

    init(label: String = "FutureLibTests.probed") {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: 1)
    }

    /// Whether the caller runs on this queue right now.
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: key) == 1
    }

    /// Suspends until everything submitted to the (serial) queue so far has run.
    func drain() async {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume() }
        }
    }
}
