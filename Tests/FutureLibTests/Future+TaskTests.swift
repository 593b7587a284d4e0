import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// `Future(task, cancellationToken:)`: from a Swift task to a future.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureTaskTests {
    @Test func `a future from a task completes with the task's value or error`() async throws {
        #expect(try await Future(Task { () async throws -> Int in 4 }).value() == 4)
        #expect(try await Future(Task { () async -> Int in 5 }).value() == 5)
        let failing = Task { () async throws -> Int in throw SampleError(code: 2) }
        await #expect(throws: SampleError(code: 2)) { try await Future(failing).value() }
    }

    @Test func `the token cancels the task and fails the future at once`() async throws {
        let request = CancellationRequest()
        let started = Promise<Void>()
        let task = Task { () async throws -> Int in
            started.fulfill(())
            try await Task.sleep(for: .seconds(600))
            return 1
        }
        let future = Future(task, cancellationToken: request.token)
        try await started.future.value()
        request.cancel()
        #expect(isCancellation(future.result))  // before the task noticed
        await #expect(throws: CancellationError.self) { try await task.value }  // the task was cancelled
    }

    @Test func `an already cancelled token cancels the task at once`() async {
        let task = Task { () async -> Bool in
            try? await Task.sleep(for: .seconds(600))
            return Task.isCancelled
        }
        let future = Future(task, cancellationToken: .cancelled)
        #expect(isCancellation(future.result))
        #expect(await task.value)
    }
}
