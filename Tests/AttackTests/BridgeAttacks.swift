import Cancellation
import FutureLib
import Testing

// Bridges under hostile use: `withCancellation`, `withTaskCancellationToken` and `Future { async }`
// with tokens cancelled before, during and after, tokens that escape their scope, tasks that
// ignore cancellation, and deep nesting. Run in child processes: a crash fails one case.

enum Bridges {
    static let rounds = AttackSize.isSanitized ? 200 : 2_000

    static func withCancellationRaces() async {
        failAfter(seconds: 120)
        for _ in 0..<rounds {
            let request = CancellationRequest()
            async let cancel: Void = request.cancel()
            let sawCancel = await withCancellation(request.token) { () async -> Bool in
                await Task.yield()
                return Task.isCancelled
            }
            await cancel
            _ = sawCancel  // either is right: the cancel may come after the operation ended
        }
        // Cancelled before: the operation starts in a cancelled task.
        let cancelled = CancellationRequest()
        cancelled.cancel()
        let seen = await withCancellation(cancelled.token) { Task.isCancelled }
        guard seen else { fatalError("withCancellation: a cancelled token did not cancel the task") }
        // Cancelled after the scope ended: nothing to cancel, nothing crashes.
        let after = CancellationRequest()
        await withCancellation(after.token) {}
        after.cancel()
    }

    static func escapedTokens() async {
        failAfter(seconds: 120)
        var escaped: [CancellationToken] = []
        for _ in 0..<rounds {
            let token = await withTaskCancellationToken { token in token }
            escaped.append(token)
        }
        let runs = Shared(0)
        for token in escaped {
            let registration = token.onCancel { runs.withLock { $0 += 1 } }
            registration.unregister()
        }
        // A task cancelled while its body waits on the token.
        let task = Task {
            await withTaskCancellationToken { token in await token.wait() }
        }
        task.cancel()
        await task.value
        // Nested bridges, each token feeding the next scope.
        let nested = Task { await nest(64) }
        nested.cancel()
        guard await nested.value else { fatalError("a nested bridge missed the task's cancellation") }
    }

    private static func nest(_ depth: Int) async -> Bool {
        await withTaskCancellationToken { token in
            guard depth > 0 else {
                await token.wait()
                return token.isCancellationRequested
            }
            return await withCancellation(token) { await nest(depth - 1) }
        }
    }

    static func asyncFutures() async {
        failAfter(seconds: 120)
        // A task that ignores cancellation: the future fails at once anyway.
        let request = CancellationRequest()
        let stubborn = Future(cancellationToken: request.token) { () async throws -> Int in
            while true {
                try? await Task.sleep(for: .milliseconds(5))
                if Task.isCancelled { return 1 }
            }
        }
        request.cancel()
        guard case .failure(let error)? = stubborn.result, error is CancellationError else {
            fatalError("Future { async } did not fail at once when its token was cancelled")
        }
        // Many racing a cancel.
        for _ in 0..<(rounds / 10) {
            let request = CancellationRequest()
            let futures = (0..<10).map { index in
                Future(cancellationToken: request.token) { () async throws -> Int in
                    try Task.checkCancellation()
                    return index
                }
            }
            request.cancel()
            for future in futures {
                guard (try? await future.value(timeout: patient(.seconds(30)))) != nil || future.isCompleted else {
                    fatalError("Future { async } never completed after a racing cancel")
                }
            }
        }
        // A cancelled token: the work never runs.
        let cancelled = CancellationRequest()
        cancelled.cancel()
        let ran = Shared(false)
        let skipped = Future(cancellationToken: cancelled.token) { () async -> Int in
            ran.value = true
            return 1
        }
        guard case .failure? = skipped.result, !ran.value else { fatalError("work ran under a cancelled token") }
        // Thrown errors and values arrive.
        let thrown = Future { () async throws -> Int in throw AttackError() }
        guard (try? await thrown.value()) == nil else { fatalError("a thrown error was lost") }
        let wrapped = Future(Task { 5 })
        guard (try? await wrapped.value()) == 5 else { fatalError("Future(Task) lost its value") }
    }
}

extension Attacks {
    @Suite(.serialized, .timeLimit(.minutes(AttackLimit.minutes(5))))
    struct BridgeAttacks {
        @Test func `withCancellation with tokens cancelled before, during and after`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    await Bridges.withCancellationRaces()
                }
            )
        }

        @Test func `withTaskCancellationToken tokens that escape, wait and nest`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    await Bridges.escapedTokens()
                }
            )
        }

        @Test func `Future with async work under hostile tokens`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    await Bridges.asyncFutures()
                }
            )
        }
    }
}
