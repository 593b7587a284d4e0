import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// `ensure`: cleanup that runs exactly once, on its context, on every outcome.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureEnsureTests {
    /// A serial queue that can tell whether the calling code runs on it.
    private static func markedQueue() -> (DispatchQueue, @Sendable () -> Bool) {
        let key = DispatchSpecificKey<Bool>()
        let queue = DispatchQueue(label: "ensure")
        queue.setSpecific(key: key, value: true)
        return (queue, { DispatchQueue.getSpecific(key: key) == true })
    }

    @Test func `cleanup runs once on its context for a value, and the value passes on`() async throws {
        let (queue, onQueue) = Self.markedQueue()
        let runs = CallFlag()
        let ranOnQueue = CallFlag()
        let promise = Promise<Int>()
        let ensured = promise.future.ensure(on: queue) {
            runs.set()
            if onQueue() { ranOnQueue.set() }
        }
        promise.fulfill(5)
        #expect(try await ensured.value() == 5)
        #expect(runs.count == 1)
        #expect(ranOnQueue.count == 1)
    }

    @Test func `cleanup runs once for an error, and the error passes on`() async {
        let runs = CallFlag()
        let ensured = Future<Int>(error: SampleError(code: 4)).ensure { runs.set() }
        await #expect(throws: SampleError(code: 4)) { try await ensured.value() }
        #expect(runs.count == 1)
    }

    @Test func `cleanup runs once when the source is cancelled by its work's token`() async {
        let request = CancellationRequest()
        let source = Future(value: 1, after: .seconds(60), cancellationToken: request.token)
        let runs = CallFlag()
        let ensured = source.ensure { runs.set() }
        request.cancel()
        await #expect(throws: CancellationError.self) { try await ensured.value() }
        #expect(runs.count == 1)
    }

    @Test func `cleanup runs once on its context when its own token fires; the new future fails at once`() async {
        let (queue, onQueue) = Self.markedQueue()
        let request = CancellationRequest()
        let promise = Promise<Int>()
        let runs = CallFlag()
        let ranOnQueue = CallFlag()
        let cleaned = Signal()
        let ensured = promise.future.ensure(on: queue, cancellationToken: request.token) {
            runs.set()
            if onQueue() { ranOnQueue.set() }
            cleaned.fire()
        }
        queue.suspend()  // the cleanup cannot run yet: the new future must not wait for it
        request.cancel()
        #expect(isCancellation(ensured.result))
        queue.resume()
        #expect(await onDedicatedThread { cleaned.wait() })
        promise.fulfill(1)  // later completion of the source: no second run
        try? await Future(value: ()).hop(to: queue).value()  // drain the queue
        #expect(runs.count == 1)
        #expect(ranOnQueue.count == 1)
    }

    @Test func `cleanup runs once when its token is already cancelled, even on a completed source`() async {
        let runs = CallFlag()
        let ensured = Future(value: 1).ensure(on: .synchronous, cancellationToken: .cancelled) { runs.set() }
        #expect(isCancellation(ensured.result))
        #expect(runs.count == 1)
    }

    @Test func `completion racing the token runs the cleanup exactly once`() async {
        struct Round: Sendable {
            let promise = Promise<Int>()
            let request = CancellationRequest()
            let runs = CallFlag()
            let ensured: Future<Int>
            init() {
                let runs = self.runs
                ensured = promise.future.ensure(on: .synchronous, cancellationToken: request.token) { runs.set() }
            }
        }
        let failures = await race(
            iterations: Stress.heavy,
            setup: { Round() },
            actions: [{ $0.promise.fulfill(1) }, { $0.request.cancel() }],
            check: { round in
                round.runs.count == 1 && round.ensured.isCompleted ? nil : "ran \(round.runs.count) times"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `async cleanup runs once for a value and once when its own token fires`() async throws {
        let runs = CallFlag()
        let value = try await Future(value: 2).ensure { () async in
            await Task.yield()
            runs.set()
        }.value()
        #expect(value == 2)
        #expect(runs.count == 1)

        let request = CancellationRequest()
        let cleaned = Signal()
        let pending = Promise<Int>()
        let cancelled = pending.future.ensure(cancellationToken: request.token) { () async in
            await Task.yield()
            #expect(!Task.isCancelled)  // the token does not cancel the cleanup's task
            runs.set()
            cleaned.fire()
        }
        request.cancel()
        #expect(isCancellation(cancelled.result))
        #expect(await onDedicatedThread { cleaned.wait() })
        #expect(runs.count == 2)
        withExtendedLifetime(pending) {}
    }

    @Test func `cleanup on .mainActor runs on the main actor, also when its own token fires`() async {
        let log = MainActorLog()
        let request = CancellationRequest()
        let pending = Promise<Int>()
        let first = Future(value: 1).ensure(on: .mainActor) {
            MainActor.assertIsolated()
            log.entries.append(1)
        }
        let second = pending.future.ensure(on: .mainActor, cancellationToken: request.token) {
            MainActor.assertIsolated()
            log.entries.append(2)
        }
        request.cancel()
        _ = await awaitOutcome(first)
        _ = await awaitOutcome(second)
        await MainActor.run {}  // the cleanups were queued on the main actor before this
        #expect(await MainActor.run { log.entries } == [1, 2])
        withExtendedLifetime(pending) {}
    }
}
