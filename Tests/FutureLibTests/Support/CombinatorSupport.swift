import FutureLib
import Synchronization

struct SampleError: Error, Equatable {
    var code = 1
}

/// A result, awaited without blocking.
func awaitOutcome<T>(_ future: Future<T>) async -> Result<T, any Error> {
    do {
        return .success(try await future.value())
    } catch {
        return .failure(error)
    }
}

/// Counts how often it was set, from any thread.
final class CallFlag: Sendable {
    private let counter = Atomic(0)
    func set() { counter.add(1, ordering: .relaxed) }
    var isSet: Bool { count > 0 }
    var count: Int { counter.load(ordering: .relaxed) }
}

func isCancellation<T>(_ result: Result<T, any Error>?) -> Bool {
    if case .failure(let error)? = result { return error is CancellationError }
    return false
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
