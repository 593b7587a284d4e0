import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureTests {
    // MARK: - Completed futures

    @Test func `init(value:) is completed with the value`() async throws {
        let future = Future(value: "done")
        #expect(future.isCompleted)
        #expect(future.result?.successValue == "done")
        #expect(try await future.value() == "done")
    }

    @Test func `init(error:) is completed with the error`() async {
        let future = Future<Int>(error: TestFailure(code: 3))
        #expect(future.isCompleted)
        #expect(future.result?.testFailure == TestFailure(code: 3))
        await #expect(throws: TestFailure(code: 3)) { try await future.value() }
    }

    @Test func `result is nil and isCompleted false while pending`() {
        let promise = Promise<Int>()
        #expect(promise.future.result == nil)
        #expect(!promise.future.isCompleted)
        promise.fulfill(1)
        #expect(promise.future.isCompleted)
    }

    // MARK: - Synchronous work

    @Test func `work's value completes the future`() async throws {
        #expect(try await Future { 6 * 7 }.value() == 42)
    }

    @Test func `throwing work fails the future with its error`() async {
        let future = Future<Int>(on: .default) { throw TestFailure(code: 9) }
        await #expect(throws: TestFailure(code: 9)) { try await future.value() }
    }

    @Test func `work runs on the given context`() async throws {
        let probe = ProbedQueue()
        let ranOnQueue = try await Future(on: probe.queue) { probe.isCurrent }.value()
        #expect(ranOnQueue)
    }

    @Test func `work on .synchronous runs before init returns`() {
        let ran = Counter()
        let future = Future(on: .synchronous) {
            ran.increment()
            return 1
        }
        #expect(ran.value == 1)
        #expect(future.result?.successValue == 1)
    }

    @Test func `a token cancelled before init means work never runs and the future fails with CancellationError`() async
    {
        let request = CancellationRequest()
        request.cancel()
        let ran = Counter()
        let future = Future(on: .default, cancellationToken: request.token) {
            ran.increment()
            return 1
        }
        #expect(future.result?.isCancellation == true)
        #expect(await settled(future).isCancellation)
        await ProbedQueue().drain()
        #expect(ran.value == 0)
    }

    @Test func `a token cancelled while work is queued means work never runs`() async {
        let probe = ProbedQueue()
        probe.queue.suspend()
        let request = CancellationRequest()
        let ran = Counter()
        let future = Future(on: probe.queue, cancellationToken: request.token) {
            ran.increment()
            return 1
        }
        #expect(!future.isCompleted)
        request.cancel()
        #expect(future.result?.isCancellation == true)  // at once, not when the queue runs
        probe.queue.resume()
        await probe.drain()
        #expect(ran.value == 0)
        #expect(future.result?.isCancellation == true)
    }

    @Test func `a token cancelled while work runs fails the future at once and drops the late value`() async {
        let request = CancellationRequest()
        let started = Signal()
        let release = Signal()
        let future = Future(on: ThreadPerJob(), cancellationToken: request.token) {
            started.fire()
            release.wait()
            return 1
        }
        #expect(await onDedicatedThread { started.wait() })
        request.cancel()
        #expect(future.result?.isCancellation == true)
        release.fire()
        #expect(await settled(future).isCancellation)
    }

    @Test func `a token that is never cancelled does not affect the work`() async throws {
        let request = CancellationRequest()
        #expect(try await Future(cancellationToken: request.token) { 5 }.value() == 5)
        let future = Future(on: .synchronous, cancellationToken: request.token) { 6 }
        request.cancel()  // after completion: changes nothing
        #expect(future.result?.successValue == 6)
    }

    // MARK: - Async work

    @Test func `async work's value completes the future`() async throws {
        let future = Future { () async throws -> Int in
            try await Task.sleep(for: .milliseconds(1))
            return 8
        }
        #expect(try await future.value() == 8)
    }

    @Test func `throwing async work fails the future with its error`() async {
        let future = Future { () async throws -> Int in throw TestFailure(code: 6) }
        await #expect(throws: TestFailure(code: 6)) { try await future.value() }
    }

    @Test func `a token cancelled before init means async work never runs`() async {
        let ran = Counter()
        let future = Future(cancellationToken: .cancelled) { () async throws -> Int in
            ran.increment()
            return 1
        }
        #expect(future.result?.isCancellation == true)
        try? await Task.sleep(for: .milliseconds(10))
        #expect(ran.value == 0)
    }

    @Test func `the token cancels the task of async work and fails the future at once`() async {
        let request = CancellationRequest()
        let started = Signal()
        let taskSawCancellation = Signal()
        let future = Future(cancellationToken: request.token) { () async throws -> Int in
            started.fire()
            await withTaskCancellationHandler {
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(60)) }
            } onCancel: {
                taskSawCancellation.fire()
            }
            return 1
        }
        #expect(await onDedicatedThread { started.wait() })
        request.cancel()
        #expect(future.result?.isCancellation == true)
        #expect(await onDedicatedThread { taskSawCancellation.wait() })
    }

    @Test func `a cancelled token wins over async work that returns as soon as its task is cancelled`() async {
        for _ in 0..<200 {
            let request = CancellationRequest()
            let started = Signal()
            let future = Future(cancellationToken: request.token) { () async throws -> Int in
                started.fire()
                while !Task.isCancelled { await Task.yield() }
                return 1  // ignores the cancellation, but only after the token cancelled the task
            }
            #expect(await onDedicatedThread { started.wait() })
            request.cancel()
            let result = await settled(future)
            #expect(result.isCancellation, "\(result)")
            if !result.isCancellation { break }
        }
    }

    @TaskLocal static var traceID = 0

    @Test func `async work runs in a task of its own, which does not inherit the caller's task-local values`()
        async throws
    {
        #if canImport(Darwin)
        guard #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) else { return }
        #endif
        let seen = try await Self.$traceID.withValue(7) {
            try await Future { () async throws -> Int in Self.traceID }.value()
        }
        #expect(seen == 0)
        let captured = try await Self.$traceID.withValue(7) {
            let traceID = Self.traceID  // what the docs advise: capture it
            return try await Future { () async throws -> Int in traceID }.value()
        }
        #expect(captured == 7)
    }

    // MARK: - Deep chains

    /// A million (20,000 under ThreadSanitizer, see `Scale`).
    static let chainLength = Scale.million

    @Test func `completing a chain of a million dependent futures on .synchronous does not overflow the stack`() async {
        // On a dedicated thread (1 MiB of stack, less than a cooperative thread's), so that the
        // long-running chain does not occupy the cooperative pool either.
        let value = await onHeavyThread { () -> Int? in
            let head = Promise<Int>()
            var last = head.future
            for _ in 0..<Self.chainLength {
                let next = Promise<Int>()
                next.resolve(with: last)  // a continuation on .synchronous; it keeps `next` alive
                last = next.future
            }
            guard !last.isCompleted else { return nil }
            head.fulfill(17)  // a million nested completions on this thread
            return last.result?.successValue
        }
        #expect(value == 17)
    }

    @Test func `a chain of a million continuations built on completed futures does not overflow the stack`() async {
        // Each continuation registers the next one on an already-completed future, on
        // .synchronous: every registration dispatches inline, from inside the previous continuation.
        let value = await onHeavyThread { () -> Int? in
            let done = Promise<Int>()
            @Sendable func step(_ remaining: Int) {
                Future(value: remaining).onSuccess(on: .synchronous) { value in
                    if value == 0 { done.fulfill(Self.chainLength) } else { step(value - 1) }
                }
            }
            step(Self.chainLength)
            return done.future.result?.successValue
        }
        #expect(value == Self.chainLength)
    }

    @Test func `a chain of a million dependent futures whose head already completed does not overflow the stack`() async
    {
        let value = await onHeavyThread { () -> Int? in
            var last = Future(value: 3)
            for _ in 0..<Self.chainLength {
                let next = Promise<Int>()
                next.resolve(with: last)
                last = next.future
            }
            return last.result?.successValue
        }
        #expect(value == 3)
    }
}

// MARK: - On the main actor

extension FutureTests {
    @Test func `Future(on: .mainActor) runs its closure on the main actor`() async throws {
        @MainActor func isolated() -> Bool {
            MainActor.assertIsolated()
            return true
        }
        #expect(try await Future(on: .mainActor) { isolated() }.value())
    }
}
