import Cancellation
import Synchronization
import Testing

// The Cancellation API of the contract (Documentation/Guarantees.md), call by call, with `import
// Cancellation` alone (a library that only wants tokens). This file compiling with warnings as
// errors is the test of names, labels, result types and conformances: an unused result of
// `onCancel` or `unregister()` would warn without `@discardableResult`, and the `withCancellation`
// call without `try` compiles only if it rethrows. It uses no `package` symbol (no TestSupport),
// so it also type-checks against the public interface alone. The semantics are tested in the
// suites named in Documentation/Guarantees.md; the runtime checks below only confirm the calls.

/// Compiles only for a `Sendable` type.
private func requireSendable<T: Sendable>(_: T.Type) {}
/// Compiles only for a `Sendable`, `Hashable` type.
private func requireSendableHashable<T: Sendable & Hashable>(_: T.Type) {}

/// A handler counter with no `package` symbol in it.
private final class Runs: Sendable {
    let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

@Suite(.timeLimit(.minutes(3)))
struct CancellationShapesTests {
    @Test func `the request, token and registration calls compile as the contract writes them`() {
        requireSendable(CancellationRequest.self)
        requireSendableHashable(CancellationToken.self)
        requireSendableHashable(CancellationRegistration.self)

        let request: CancellationRequest = CancellationRequest()
        let delayed: CancellationRequest = CancellationRequest(cancelAfter: .seconds(3600))  // timer starts now
        let linked: CancellationRequest = CancellationRequest(linkedTo: [request.token, delayed.token])
        let token: CancellationToken = linked.token
        let requested: Bool = linked.isCancellationRequested
        #expect(!requested)
        delayed.cancel(after: .seconds(7200))  // (re)arms the timer

        let none: CancellationToken = .none
        let cancelled: CancellationToken = .cancelled
        let canBe: Bool = none.canBeCancelled
        #expect(!canBe && cancelled.isCancellationRequested && token.canBeCancelled)

        let runs = Runs()
        token.onCancel { runs.increment() }  // @discardableResult
        let registration: CancellationRegistration = token.onCancel { runs.increment() }
        let removed: Bool = registration.unregister()
        #expect(removed)
        registration.unregister()  // @discardableResult
        token.onCancel { runs.increment() }.unregisterAndWait()

        request.cancel()  // cancels `linked` through its link
        request.cancel()  // idempotent
        #expect(runs.value == 1)
        do {
            try token.checkCancellation()
            Issue.record("checkCancellation did not throw for a cancelled token")
        } catch is CancellationError {
            // Cancellation is the standard library's error, for tokens as for tasks.
        } catch {
            Issue.record("checkCancellation threw \(error), not CancellationError")
        }
        let waited: Bool = token.wait(timeout: .seconds(10))  // blocks; true if cancelled (it is)
        #expect(waited)
        withExtendedLifetime(delayed) {}
    }

    @Test func `the async and structured-concurrency calls compile as the contract writes them`() async {
        let request = CancellationRequest()
        request.cancel()
        await request.token.wait()  // suspends until cancelled (it is)

        // Both bridges rethrow: no `try` for a body that cannot throw.
        let inside: Bool = await withCancellation(CancellationToken.none) { Task.isCancelled }
        #expect(!inside)
        let live: Bool = await withTaskCancellationToken { (token: CancellationToken) in token.canBeCancelled }
        #expect(live)

        // A cancelled token cancels the task (in a task of its own, so that this one goes on), and the
        // operation's error is the task's own `CancellationError`.
        let outcome = await Task {
            try await withCancellation(request.token) { try Task.checkCancellation() }
        }.result
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    @Test func `the deadline calls compile as the contract writes them`() {
        let clock = ManualClock()
        let parent = CancellationRequest(cancelAfter: .seconds(2), clock: clock)
        let call = CancellationRequest(linkedTo: parent.token, timeout: .seconds(5), clock: clock)
        let onSystemClock = CancellationRequest(linkedTo: parent.token, timeout: .seconds(5))
        let deadline: CancellationDeadline? = call.token.deadline
        let remaining: Duration? = call.token.timeRemaining
        #expect(remaining == .seconds(2))
        let instant: Duration? = deadline?.instant
        let deadlineClock: (any TimerClock)? = deadline?.clock
        let left: Duration? = deadline?.remaining
        let passed: Bool? = deadline?.hasPassed
        let made = CancellationDeadline(instant: clock.now + .seconds(1), clock: clock)
        let now: Duration = SystemClock().now  // `TimerClock.now`, with a default for clocks that give none
        _ = (onSystemClock, instant, deadlineClock, left, passed, made, now)
    }
}
