import FutureLib
import FutureTestSupport
import Synchronization
import TestSupport

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

    /// The code of a failure with `SampleError`.
    var sampleCode: Int? {
        if case .failure(let error as SampleError) = self { return error.code }
        return nil
    }
}

/// One round of `firstSuccessRace`: three inputs, completed (or the token cancelled) by three threads at once.
final class FirstSuccessRound: Sendable {
    /// What the three threads do, and which results that allows.
    enum Case: String, CaseIterable, Sendable {
        /// A failure, a success and a `CancellationError`: the success.
        case oneSuccess
        /// Two successes and a failure: either success.
        case twoSuccesses
        /// Three failures: one of them.
        case allFail
        /// A failure, a success and the token's cancellation: the success or `CancellationError`; the
        /// third input stays pending.
        case cancel

        func allows(_ outcome: Result<Int, any Error>) -> Bool {
            switch self {
            case .oneSuccess: outcome.successValue == 1
            case .twoSuccesses: outcome.successValue == 0 || outcome.successValue == 1
            case .allFail: outcome.sampleCode != nil
            case .cancel: outcome.successValue == 1 || outcome.isCancellation
            }
        }
    }

    let inputs = (0..<3).map { _ in Promise<Int>() }
    let request = CancellationRequest()
    let calls = Counter()
    let outcome = Locked<Result<Int, any Error>?>(nil)

    init(token: Bool) {
        let first = inputs.map(\.future).firstSuccess(cancellationToken: token ? request.token : .none)
        first.onComplete(on: .synchronous) { [calls, outcome] result in
            calls.increment()
            outcome.withLock { $0 = result }
        }
    }

    /// What thread `thread` does in `raceCase`.
    func act(_ thread: Int, in raceCase: Case) {
        switch (raceCase, thread) {
        case (.oneSuccess, 1), (.twoSuccesses, 0), (.twoSuccesses, 1), (.cancel, 1): inputs[thread].fulfill(thread)
        case (.oneSuccess, 2): inputs[thread].reject(CancellationError())
        case (.cancel, 2): request.cancel()
        default: inputs[thread].reject(SampleError(code: thread))
        }
    }
}
