// `make demo`: FutureLib doing its main job — work started as futures, cancelled in flight by
// timers and shared tokens, with a timeline of what happened when.
import FutureLib
import Synchronization

let start = ContinuousClock.now

func log(_ line: String) {
    let elapsed = (ContinuousClock.now - start).components
    let milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
    print("[\(String(milliseconds).leftPadded(to: 5)) ms] \(line)")
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}

/// A stand-in for a download: takes `duration`, stops early when its task is cancelled.
func download(_ name: String, taking duration: Duration, cancellationToken: CancellationToken = .none) -> Future<String>
{
    Future(cancellationToken: cancellationToken) {
        try await Task.sleep(for: duration)
        return "\(name) (\(duration))"
    }
}

func describe<T>(_ result: Result<T, any Error>) -> String {
    switch result {
    case .success(let value): "done: \(value)"
    case .failure(is CancellationError): "cancelled"
    case .failure(let error): "failed: \(error)"
    }
}

func run() async {
    log("1. A timer cancels a slow request in flight; a fast one finishes first.")
    let deadline = CancellationRequest(cancelAfter: .milliseconds(300))
    deadline.token.onCancel { log("   timer fired: token cancelled") }
    let fast = download("fast.json", taking: .milliseconds(100), cancellationToken: deadline.token)
    let slow = download("slow.json", taking: .seconds(5), cancellationToken: deadline.token)
    for (name, future) in [("fast.json", fast), ("slow.json", slow)] {
        let result = await outcome(future)
        log("   \(name): \(describe(result))")
    }

    log("2. One shared token cancels a whole batch at once.")
    let batch = CancellationRequest()
    let downloads = (1...4).map { download("part-\($0)", taking: .seconds(10), cancellationToken: batch.token) }
    Future(value: (), after: .milliseconds(150)).onSuccess { _ in
        log("   user pressed cancel")
        batch.cancel()
    }
    let outcomes = await outcome(downloads.results())
    if case .success(let results) = outcomes {
        log(
            "   \(results.filter { if case .failure(is CancellationError) = $0 { true } else { false } }.count) of 4 parts cancelled"
        )
    }

    log("3. traverse downloads 12 files (200 ms each), 3 at a time, while a 500 ms deadline runs out.")
    let budget = CancellationRequest(cancelAfter: .milliseconds(500))
    let finished = Counter()
    let all = (1...12).traverse(cancellationToken: budget.token, maxConcurrency: 3) { index in
        download("file-\(index)", taking: .milliseconds(200), cancellationToken: budget.token)
            .andThen(on: .synchronous) { if case .success = $0 { finished.increment() } }
    }
    let traversal = await outcome(all)
    log("   traverse: \(describe(traversal)) after \(finished.value) of 12 files")

    log("4. Combinators: zip, map, recover, timeout.")
    let profile = zip(download("user", taking: .milliseconds(50)), download("posts", taking: .milliseconds(80)))
        .map { user, posts in "\(user) + \(posts)" }
    log("   zip + map: \(describe(await outcome(profile)))")
    let withFallback = download("primary", taking: .seconds(2)).timeout(after: .milliseconds(100))
        .recover { error in "cached copy (primary: \(error))" }
    log("   timeout + recover: \(describe(await outcome(withFallback)))")

    log("Summary: every future above completed — none was lost, none waits forever.")
}

/// Counts from any thread.
final class Counter: Sendable {
    private let count = Atomic(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// The result of a future, waited for without blocking.
func outcome<T>(_ future: Future<T>) async -> Result<T, any Error> {
    do {
        return .success(try await future.value())
    } catch {
        return .failure(error)
    }
}

await run()
