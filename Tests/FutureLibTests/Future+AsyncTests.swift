import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureAsyncTests {
    @Test func `value() async suspends until the future is fulfilled`() async throws {
        let promise = Promise<Int>()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { promise.fulfill(12) }
        #expect(try await promise.future.value() == 12)
    }

    @Test func `value() async throws the future's error`() async {
        let promise = Promise<Int>()
        DispatchQueue.global().async { promise.reject(TestFailure(code: 8)) }
        await #expect(throws: TestFailure(code: 8)) { try await promise.future.value() }
    }

    @Test func `value() async of a dropped promise's future throws brokenPromise`() async {
        await #expect(throws: FutureError.brokenPromise) { try await Promise<Int>().future.value() }
    }

    @Test
    func `value() async throws CancellationError when the task is cancelled and leaves the future to other waiters`()
        async throws
    {
        let promise = Promise<Int>()
        let cancelledWaiter = Task { try await promise.future.value() }
        let patientWaiter = Task { try await promise.future.value() }
        try await Task.sleep(for: .milliseconds(5))  // usually suspended by now; either way the outcome is the same
        cancelledWaiter.cancel()
        await #expect(throws: CancellationError.self) { try await cancelledWaiter.value }
        #expect(promise.future.result == nil)  // untouched: still pending
        promise.fulfill(21)
        #expect(try await patientWaiter.value == 21)
        #expect(try await promise.future.value() == 21)
    }

    @Test func `value() async in an already cancelled task throws CancellationError for a pending future`() async {
        let promise = Promise<Int>()
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await promise.future.value()
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(!promise.future.isCompleted)
        withExtendedLifetime(promise) {}
    }

    @Test func `value() async of a completed future returns its value`() async throws {
        #expect(try await Future(value: 2).value() == 2)
        await #expect(throws: TestFailure()) { try await Future<Int>(error: TestFailure()).value() }
    }

    @Test func `value(timeout:) async throws timeout for a future that stays pending, and leaves it pending`()
        async throws
    {
        let promise = Promise<Int>()
        await #expect(throws: FutureError.timeout) { try await promise.future.value(timeout: .milliseconds(20)) }
        #expect(!promise.future.isCompleted)
        promise.fulfill(3)
        #expect(try await promise.future.value(timeout: HangLimit.timeout(.seconds(30))) == 3)
    }

    @Test func `value(timeout:clock:) async on a manual clock times out at the deadline, not an instant before`()
        async throws
    {
        let clock = ManualClock()
        let late = Promise<Int>()
        let timingOut = Task { try await late.future.value(timeout: .seconds(5), clock: clock) }
        await clock.waitForPendingTimers()  // the task waits, its timer armed
        await clock.advanceAndSettle(by: .seconds(5))
        await #expect(throws: FutureError.timeout) { try await timingOut.value }
        #expect(!late.future.isCompleted)

        let inTime = Promise<Int>()
        let waiting = Task { try await inTime.future.value(timeout: .seconds(5), clock: clock) }
        await clock.waitForPendingTimers()
        await clock.advanceAndSettle(by: .seconds(5) - .nanoseconds(1))
        inTime.fulfill(7)
        #expect(try await waiting.value == 7)
        #expect(clock.pendingTimerCount == 0)  // the wait's timer is stopped

        let pending = Promise<Int>()
        let bounded = Task { await pending.future.wait(timeout: .seconds(1), clock: clock) }
        await clock.waitForPendingTimers()
        await clock.advanceAndSettle(by: .seconds(1))
        #expect(await bounded.value == false)
        withExtendedLifetime((late, pending)) {}
    }

    @Test func `value(timeout:) async with a negative timeout counts as zero`() async {
        let promise = Promise<Int>()
        await #expect(throws: FutureError.timeout) { try await promise.future.value(timeout: .seconds(-5)) }
        withExtendedLifetime(promise) {}
    }

    @Test func `value(timeout:) async returns a value that comes before the deadline`() async throws {
        let promise = Promise<Int>()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { promise.fulfill(4) }
        #expect(try await promise.future.value(timeout: HangLimit.timeout(.seconds(30))) == 4)
    }

    @Test func `wait(timeout:) async is false for a pending future and true for a completed one`() async {
        let promise = Promise<Int>()
        #expect(await !promise.future.wait(timeout: .milliseconds(10)))
        #expect(await !promise.future.wait(timeout: .zero))
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { promise.fulfill(1) }
        #expect(await promise.future.wait(timeout: HangLimit.timeout(.seconds(30))))
        #expect(await Future(value: 1).wait(timeout: .zero))
    }

    @Test func `wait(timeout:) async ends early when the task is cancelled`() async {
        let promise = Promise<Int>()
        let waiter = Task { await promise.future.wait(timeout: .seconds(3600)) }
        try? await Task.sleep(for: .milliseconds(5))
        waiter.cancel()
        #expect(await waiter.value == false)
        #expect(!promise.future.isCompleted)
        withExtendedLifetime(promise) {}
    }

    @Test func `value() async waiters give their threads back while they wait`() async throws {
        let promise = Promise<Int>()
        let started = Counter()
        let waiters = 20  // many more than the cooperative pool has threads
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<waiters {
                group.addTask {
                    started.increment()
                    return try await promise.future.value()
                }
            }
            // All waiters can start only if those already waiting do not hold a thread; otherwise
            // this loop never ends and the time limit fails the test.
            while started.value < waiters { await Task.yield() }
            promise.fulfill(7)
            var values: [Int] = []
            for try await value in group { values.append(value) }
            #expect(values == Array(repeating: 7, count: waiters))
        }
    }

    @Test func `value() async waiters each get the value exactly once`() async throws {
        let promise = Promise<Int>()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask { try await promise.future.value() }
            }
            promise.fulfill(5)
            var values: [Int] = []
            for try await value in group { values.append(value) }
            #expect(values == Array(repeating: 5, count: 20))
        }
    }
}

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureWaiterCancellationTests {
    @Test
    func `a waiter's task cancellation racing completion resumes it exactly once, with the value or CancellationError`()
        async throws
    {
        // The wait's continuation is an unsafe one: a second resume would crash the test run.
        // The two delays vary where the completion and the cancellation land: before the wait,
        // during its watch, or after it suspended (any order is valid; only the outcome is checked).
        var outcomes = (values: 0, cancellations: 0)
        for iteration in 0..<Stress.heavy {
            let promise = Promise<Int>()
            let waiter = Task { try await promise.future.value() }
            let fulfilDelay = Duration.microseconds(iteration % 41)
            DispatchQueue.global().async {
                busyWait(fulfilDelay)
                promise.fulfill(1)
            }
            busyWait(.microseconds(iteration * 7 % 53))
            waiter.cancel()
            switch await waiter.result {
            case .success(let value):
                #expect(value == 1)
                outcomes.values += 1
            case .failure(let error):
                #expect(error is CancellationError)
                outcomes.cancellations += 1
            }
            #expect(try await promise.future.value() == 1)  // the future itself is untouched
        }
        #expect(outcomes.values + outcomes.cancellations == Stress.heavy)
    }

    @Test func `value() async returns a value that comes while the task watches for it, or after it suspended`()
        async throws
    {
        // The wait first watches the future briefly (no suspension), then suspends: both ends work.
        for delay in [0, 2, 50, 2_000] {
            let promise = Promise<Int>()
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(delay)) { promise.fulfill(delay) }
            #expect(try await promise.future.value() == delay)
        }
    }

    @Test func `a cancelled waiter abandons only its own wait: the other waiter and the producer are untouched`()
        async throws
    {
        let producer = CancellationRequest()
        let release = Signal()
        let produced = Counter()
        let future = Future(on: .default, cancellationToken: producer.token) {
            release.wait()
            produced.increment()
            return 7
        }
        let abandoned = Task { try await future.value() }
        let patient = Task { try await future.value() }
        abandoned.cancel()
        await #expect(throws: CancellationError.self) { try await abandoned.value }
        #expect(!future.isCompleted)
        #expect(!producer.isCancellationRequested)
        release.fire()
        #expect(try await patient.value == 7)
        #expect(produced.value == 1)
        #expect(try await future.value() == 7)
    }
}

/// Spins for `duration`: a delay shorter than a sleep's granularity, to vary a race's interleaving.
private func busyWait(_ duration: Duration) {
    let clock = ContinuousClock()
    let end = clock.now + duration
    while clock.now < end {}
}
