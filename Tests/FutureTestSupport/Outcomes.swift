package import Dispatch
package import FutureLib

/// An error the tests fail futures with, told apart by its code.
package struct TestFailure: Error, Equatable {
    package var code = 1

    package init(code: Int = 1) {
        self.code = code
    }
}

/// Another error the tests fail futures with, told apart by its code.
package struct SampleError: Error, Equatable {
    package var code = 1

    package init(code: Int = 1) {
        self.code = code
    }
}

/// The future's result, awaited without blocking a thread (never throws).
package func settled<T>(_ future: Future<T>) async -> Result<T, any Error> {
    do {
        return .success(try await future.value())
    } catch {
        return .failure(error)
    }
}

extension Result {
    /// Whether this is a failure with `CancellationError`.
    package var isCancellation: Bool {
        if case .failure(let error) = self { return error is CancellationError }
        return false
    }

    /// The error of a failure, as `FutureError`, if it is one.
    package var futureError: FutureError? {
        if case .failure(let error) = self { return error as? FutureError }
        return nil
    }

    /// The error of a failure, as `TestFailure`, if it is one.
    package var testFailure: TestFailure? {
        if case .failure(let error) = self { return error as? TestFailure }
        return nil
    }

    /// The value of a success.
    package var successValue: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

/// A serial queue that can tell whether code runs on it (a `DispatchSpecificKey`), to check the
/// context a continuation ran on.
package final class ProbedQueue: Sendable {
    package let queue: DispatchQueue
    private let key = DispatchSpecificKey<Int>()

    package init(label: String = "FutureLibTests.probed") {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: 1)
    }

    /// Whether the caller runs on this queue right now.
    package var isCurrent: Bool {
        DispatchQueue.getSpecific(key: key) == 1
    }

    /// Suspends until everything submitted to the (serial) queue so far has run.
    package func drain() async {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume() }
        }
    }
}
