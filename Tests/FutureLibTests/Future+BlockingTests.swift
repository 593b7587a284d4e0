import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// The blocking API: `value()`, `value(timeout:)`, `wait(timeout:)`.
///
/// Synchronous tests, because the blocking overloads are unavailable in async code. The nested
/// `Serialized` suite is the one place whose tests block one at a time; `OnTheCooperativePool`
/// deliberately blocks from many tests in parallel (Swift Testing runs synchronous tests on the
/// cooperative pool), which is exactly what must not starve the library.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureBlockingTests {
    @Suite(.serialized)
    struct Serialized {
        @Test func `value() blocks until the future is fulfilled`() throws {
            let promise = Promise<Int>()
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { promise.fulfill(13) }
            #expect(try promise.future.value() == 13)
        }

        @Test func `value() of a completed future returns at once`() throws {
            #expect(try Future(value: 1).value() == 1)
            #expect(throws: TestFailure(code: 3)) { try Future<Int>(error: TestFailure(code: 3)).value() }
        }

        @Test func `value() throws the future's error`() {
            let promise = Promise<Int>()
            DispatchQueue.global().async { promise.reject(TestFailure(code: 4)) }
            #expect(throws: TestFailure(code: 4)) { try promise.future.value() }
        }

        @Test func `value() of a dropped promise's future throws brokenPromise`() {
            #expect(throws: FutureError.brokenPromise) { try Promise<Int>().future.value() }
            #expect(throws: FutureError.brokenPromise) {
                try Promise<Int>().future.value(timeout: HangLimit.timeout(.seconds(30)))
            }
        }

        @Test func `value(timeout:) throws timeout for a future that never completes`() {
            let promise = Promise<Int>()
            withExtendedLifetime(promise) {
                #expect(throws: FutureError.timeout) { try promise.future.value(timeout: .milliseconds(20)) }
                #expect(!promise.future.isCompleted)  // the future is not affected
            }
        }

        @Test func `value(timeout:) with a zero or negative timeout throws timeout for a pending future`() {
            let promise = Promise<Int>()
            withExtendedLifetime(promise) {
                #expect(throws: FutureError.timeout) { try promise.future.value(timeout: .zero) }
                #expect(throws: FutureError.timeout) { try promise.future.value(timeout: .seconds(-1)) }
            }
        }

        @Test func `value(timeout:) returns the value or error that comes before the deadline`() throws {
            let promise = Promise<Int>()
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { promise.fulfill(2) }
            #expect(try promise.future.value(timeout: HangLimit.timeout(.seconds(30))) == 2)
            let failing = Promise<Int>()
            DispatchQueue.global().async { failing.reject(TestFailure(code: 6)) }
            #expect(throws: TestFailure(code: 6)) { try failing.future.value(timeout: HangLimit.timeout(.seconds(30))) }
        }

        @Test func `a timed-out future can still be fulfilled and read`() throws {
            let promise = Promise<Int>()
            #expect(throws: FutureError.timeout) { try promise.future.value(timeout: .milliseconds(5)) }
            promise.fulfill(8)
            #expect(try promise.future.value(timeout: HangLimit.timeout(.seconds(30))) == 8)
            #expect(try promise.future.value() == 8)
        }

        @Test func `wait(timeout:) is false for a pending future and true once completed`() {
            let promise = Promise<Int>()
            #expect(!promise.future.wait(timeout: .milliseconds(10)))
            #expect(!promise.future.wait(timeout: .seconds(-1)))
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { promise.fulfill(1) }
            #expect(promise.future.wait(timeout: HangLimit.timeout(.seconds(30))))
            #expect(Future(value: 1).wait(timeout: .zero))
            #expect(Future<Int>(error: TestFailure()).wait(timeout: .zero))
        }

        @Test func `a timed-out wait releases its continuation`() {
            // Many timed-out waits on one pending future must not pile up continuations: after
            // they ended, the only continuation left is ours, which runs exactly once.
            let promise = Promise<Int>()
            for _ in 0..<100 { _ = promise.future.wait(timeout: .zero) }
            let calls = Counter()
            promise.future.onComplete(on: .synchronous) { _ in calls.increment() }
            promise.fulfill(1)
            #expect(calls.value == 1)
        }

        @Test func `value() of .default work that blocks on other .default work, nested deeper than cores, finishes`()
            throws
        {
            let levels = 4 * WorkerCount.cores + 4
            @Sendable func nested(_ level: Int) throws -> Int {
                guard level > 0 else { return 0 }
                return try Future(on: .default) { try nested(level - 1) + 1 }.value(
                    timeout: HangLimit.timeout(.seconds(30))
                )
            }
            #expect(try nested(levels) == levels)
        }

        @Test func `many .default jobs blocking on each other's work in parallel finish`() throws {
            let futures = (0..<16).map { index in
                Future(on: .default) {
                    try Future(on: .default) { try Future(on: .default) { index }.value() }.value()
                }
            }
            #expect(try futures.map { try $0.value(timeout: HangLimit.timeout(.seconds(30))) } == Array(0..<16))
        }

        @Test func `value() of async work blocks until the task finishes`() throws {
            let future = Future { () async throws -> Int in
                try await Task.sleep(for: .milliseconds(5))
                return 3
            }
            #expect(try future.value(timeout: HangLimit.timeout(.seconds(30))) == 3)
        }
    }

    /// The one warning of a `value()` that blocks a task's thread for long. Serialized: the
    /// diagnostic's configuration is process-wide.
    @Suite(.serialized)
    struct Diagnostic {
        @Test func `a value() that blocks a task's thread past the threshold warns once, naming the cause and fix`()
            throws
        {
            // A synchronous Swift Testing test runs on the cooperative pool, in a task.
            let promise = Promise<Int>()
            let messages = Locked<[String]>([])
            let previous = BlockingDiagnostic.configure(
                .init(threshold: .milliseconds(100)) { message in
                    messages.withLock { $0.append(message) }
                    promise.fulfill(1)  // ends the wait that warned
                }
            )
            defer { BlockingDiagnostic.configure(previous) }
            #expect(try promise.future.value() == 1)
            #expect(messages.value.count == 1)
            let message = messages.value.first ?? ""
            #expect(message.contains("Task { }"))
            #expect(message.contains("Future { try await … }"))
            #expect(message.contains("once per process"))

            let second = Promise<Int>()
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { second.fulfill(2) }
            #expect(try second.future.value() == 2)
            #expect(messages.value.count == 1)  // once per process
        }

        @Test func `a thread that runs no task does not warn`() async {
            let promise = Promise<Int>()
            let warnedOn = Locked<[ThreadID]>([])
            let previous = BlockingDiagnostic.configure(
                .init(threshold: .milliseconds(50)) { _ in warnedOn.withLock { $0.append(.current) } }
            )
            defer { BlockingDiagnostic.configure(previous) }
            let blocked = await onDedicatedThread { () -> ThreadID in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { promise.fulfill(1) }
                _ = try? promise.future.value()
                return .current
            }
            #expect(!warnedOn.value.contains(blocked))
        }
    }

    @Suite
    struct OnTheCooperativePool {
        @Test(arguments: 0..<8)
        func `parallel tests blocking on async work all finish`(index: Int) throws {
            // A clock's sleep resumes from FutureLib's timer queue: `Task.sleep` would resume through
            // Swift's global executor, which needs a free cooperative thread (Documentation/Testing.md).
            let future = Future { () async throws -> Int in
                try await SystemClock().sleep(for: .milliseconds(20))
                return index
            }
            #expect(try future.value() == index)
        }

        @Test(arguments: 0..<8)
        func `parallel tests blocking on async combinators all finish`(index: Int) throws {
            // Each async closure runs in a task on FutureLib's threads, which the blocked
            // cooperative threads cannot starve.
            let source = Future(value: index)
            let mapped = source.map { value in
                try await SystemClock().sleep(for: .milliseconds(10))
                return value
            }
            let chained = mapped.flatMap { value in
                await Task.yield()
                return Future(value: value)
            }
            let recovered = Future<Int>(error: TestFailure()).recover { _ in
                try await SystemClock().sleep(for: .milliseconds(10))
                return index
            }
            let fallback = Future<Int>(error: TestFailure()).recoverWith { _ in
                await Task.yield()
                return Future(value: index)
            }
            let traversed = [index, index].traverse { value in
                try await SystemClock().sleep(for: .milliseconds(5))
                return value
            }
            let observed = Promise<Int>()
            source.onSuccess { value in
                await Task.yield()
                observed.fulfill(value)
            }
            let completed = Promise<Int>()
            source.onComplete(on: .synchronous) { result in
                await Task.yield()
                completed.fulfill((try? result.get()) ?? -1)
            }
            #expect(try chained.value() == index)
            #expect(try recovered.value() == index)
            #expect(try fallback.value() == index)
            #expect(try traversed.value() == [index, index])
            #expect(try observed.future.value() == index)
            #expect(try completed.future.value() == index)
        }

        @Test(arguments: 0..<8)
        func `parallel tests blocking on actor continuations all finish`(index: Int) throws {
            let box = Box()
            let doubled = Future(value: index).map(on: box) { box, value in
                box.count += value
                return value * 2
            }
            #expect(try doubled.value() == index * 2)
        }

        @Test(arguments: 0..<8)
        func `parallel tests blocking on .default work all finish`(index: Int) throws {
            let future = Future(on: .default) {
                pause(.milliseconds(20))
                return index
            }
            #expect(try future.value() == index)
        }

        @Test(arguments: 0..<4)
        func `parallel tests blocking on nested .default work all finish`(index: Int) throws {
            @Sendable func nested(_ level: Int) throws -> Int {
                guard level > 0 else { return index }
                return try Future(on: .default) { try nested(level - 1) }.value()
            }
            #expect(try nested(2 * WorkerCount.cores + 2) == index)
        }

        @Test(arguments: 0..<8)
        func `parallel tests blocking on timers all finish`(index: Int) throws {
            // Timers run on Dispatch, not on the cooperative pool these tests are blocking.
            #expect(
                try Future(value: index, after: .milliseconds(20)).value(timeout: HangLimit.timeout(.seconds(30)))
                    == index
            )
            #expect(
                CancellationRequest(cancelAfter: .milliseconds(20)).token.wait(timeout: HangLimit.timeout(.seconds(30)))
            )
        }

        @Test(arguments: 0..<4)
        func `parallel tests blocking with timeouts on async work all finish`(index: Int) throws {
            let future = Future { () async throws -> Int in
                try await SystemClock().sleep(for: .milliseconds(10))
                return index
            }
            #expect(future.wait(timeout: HangLimit.timeout(.seconds(30))))
            #expect(try future.value(timeout: HangLimit.timeout(.seconds(30))) == index)
        }
    }
}

/// The blocking `value()` that would deadlock on the main queue its completion needs.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureDeadlockDetectionTests {
    /// Runs `body` on `queue` and suspends (without blocking a thread) until it returned.
    private func on<T: Sendable>(_ queue: DispatchQueue, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    @Test
    func `value() on the main queue for a future completed on the main queue throws FutureError.deadlock at once`()
        async throws
    {
        let main = DispatchQueue.main.label
        let source = Promise<Int>()
        // Each of these would hang: its work needs the main queue, which value() blocks. None of
        // them waits for a grace period: the source of the first is still pending (no work is
        // queued yet), and that one is found too.
        let outcomes = await on(DispatchQueue.main) {
            [
                Result { try source.future.map(on: DispatchQueue.main) { $0 + 1 }.value() },
                Result { try Future(value: 1).map(on: DispatchQueue.main) { $0 + 1 }.value() },
                Result { try Future(on: DispatchQueue.main) { 1 }.value() },
                Result { try Future(value: 1).hop(to: DispatchQueue.main).value() },
            ]
        }
        for outcome in outcomes {
            #expect(outcome.futureError == .deadlock(queue: main))
        }
        #expect("\(outcomes[0].futureError!)".contains("'\(main)'"))
        source.fulfill(1)
        // The work still runs once the main queue is free again; nothing else was disturbed.
        #expect(try await Future(on: DispatchQueue.main) { 2 }.value() == 2)
    }

    @Test func `value(timeout:) on the main queue for a future completed there throws FutureError.deadlock at once`()
        async throws
    {
        // The timeout is far longer than the test's time limit: only the check can end the wait.
        let outcome = await on(DispatchQueue.main) {
            Result { try Future(value: 1).map(on: DispatchQueue.main) { $0 + 1 }.value(timeout: .seconds(3600)) }
        }
        #expect(outcome.futureError == .deadlock(queue: DispatchQueue.main.label))
        let completed = await on(DispatchQueue.main) { Result { try Future(value: 7).value(timeout: .zero) } }
        #expect(try completed.get() == 7)  // a completed future needs no wait, wherever it is read
    }

    @Test func `the main actor is the main queue for the check`() async {
        let outcome = await MainActor.run { Result { try Future(on: DispatchQueue.main) { 1 }.value() } }
        #expect(outcome.futureError == .deadlock(queue: DispatchQueue.main.label))
    }

    @Test func `value() on the main queue for work elsewhere waits and returns the value`() async {
        let value = await on(DispatchQueue.main) {
            try? Future(on: .default) { 5 }.map(on: DispatchQueue(label: "FutureLibTests.elsewhere")) { $0 }.value()
        }
        #expect(value == 5)
    }

    @Test func `value() on a concurrent queue, or on another queue, waits and returns the value`() async {
        let concurrent = DispatchQueue(label: "FutureLibTests.concurrent", attributes: .concurrent)
        let value = await on(concurrent) { try? Future(on: concurrent) { 3 }.value() }
        #expect(value == 3)
        let serial = DispatchQueue(label: "FutureLibTests.serial")
        let other = DispatchQueue(label: "FutureLibTests.other")
        let fromOther = await on(other) { try? Future(on: serial) { 4 }.value() }
        #expect(fromOther == 4)
    }
}

/// A default actor: its jobs run on the executor preference of the task that enters it.
private actor Box {
    var count = 0
}
