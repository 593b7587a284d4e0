import FutureLib
import TestSupport

/// State that lives on the main actor, as a view model's does.
@MainActor
final class MainActorLog {
    var entries: [Int] = []
    var errors: [any Error] = []
}

/// Main-actor state the `.mainActor` operations (`retry`, `withTimeout`, `race`) touch without a hop.
@MainActor final class Attempts {
    var count = 0
    var names: [String] = []
}

/// Whether the caller runs inside a Swift task: the synchronous forms do not, the async ones do.
func inTask() -> Bool {
    withUnsafeCurrentTask { $0 != nil }
}

/// The `actor Cache` of the docs: its own methods consume futures with continuations isolated to it.
actor Cache {
    var values: [String: Int] = [:]
    var errors: [any Error] = []
    let filled = Promise<Void>()

    func load(_ key: String, from future: Future<Int>, cancellationToken: CancellationToken = .none) {
        future.onSuccess(on: self, cancellationToken: cancellationToken) { cache, value in
            cache.assertIsolated()
            cache.values[key] = value  // synchronous access: the closure is isolated to the actor
            cache.filled.fulfill(())
        }
        future.onFailure(on: self, cancellationToken: cancellationToken) { cache, error in
            cache.assertIsolated()
            cache.errors.append(error)
            cache.filled.fulfill(())
        }
    }

    func store(_ key: String, _ value: Int) { values[key] = value }

    func doubled(_ future: Future<Int>) -> Future<Int> {
        future.map(on: self) { cache, value in
            cache.assertIsolated()
            return value * 2 + cache.values.count
        }
    }

    func result(of future: Future<Int>) -> Future<String> {
        let done = Promise<String>()
        future.onComplete(on: self) { cache, result in
            cache.assertIsolated()
            done.fulfill((try? "\(result.get())") ?? "failed")
        }
        return done.future
    }
}

extension Result {
    func failureEquals<E: Error & Equatable>(_ expected: E) -> Bool {
        if case .failure(let error as E) = self { return error == expected }
        return false
    }
}
