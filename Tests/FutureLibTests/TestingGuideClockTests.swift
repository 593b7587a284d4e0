import FutureLib
import FutureTestSupport
import Synchronization
import Testing

// The examples of Documentation/Testing.md's "Testing time" section, compiled and run: a renamed
// API breaks the build. Keep the two in step (same names, same code).

// MARK: - Code under test

/// Fetches the config, giving each attempt 5 s, and retries twice: 1 s, then 2 s after a failure.
func resilientConfig(
    clock: some TimerClock = .system,
    fetch: @escaping @Sendable (CancellationToken) -> Future<Config>
) -> Future<Config> {
    Future.retry(
        maxAttempts: 3,
        backoff: .exponential(initial: .seconds(1), maximum: .seconds(10)),
        clock: clock
    ) { token in
        Future.withTimeout(.seconds(5), clock: clock, cancellationToken: token) { attempt in
            fetch(attempt)
        }
    }
}

/// A fake server that answers after `delay` on `clock` and remembers when each request started.
final class FakeServer: Sendable {
    let clock: ManualClock
    let delay: Duration
    private let starts = Mutex<[Duration]>([])

    init(clock: ManualClock, answeringAfter delay: Duration) {
        self.clock = clock
        self.delay = delay
    }

    var startTimes: [Duration] { starts.withLock { $0 } }

    func fetch(_ token: CancellationToken) -> Future<Config> {
        starts.withLock { $0.append(clock.now) }
        return Future(value: Config(port: 80), after: delay, clock: clock, cancellationToken: token)
    }
}

// MARK: - Your own clock

/// A clock whose timers are tasks sleeping on `ContinuousClock`, which keeps counting while the
/// machine sleeps.
struct ContinuousTimerClock: TimerClock {
    func makeTimer(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> any ClockTimer {
        let timer = TaskTimer(fire)
        timer.reschedule(after: delay)
        return timer
    }
}

final class TaskTimer: ClockTimer {
    private let state: Mutex<(fire: (@Sendable () -> Void)?, task: Task<Void, Never>?)>

    init(_ fire: @escaping @Sendable () -> Void) {
        state = Mutex((fire, nil))
    }

    func reschedule(after delay: Duration) {
        let deadline = ContinuousClock.now + delay
        let replaced = state.withLock { state -> Task<Void, Never>? in
            guard let fire = state.fire else { return nil }  // cancelled: do nothing
            defer {
                state.task = Task {
                    do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
                    fire()
                }
            }
            return state.task
        }
        replaced?.cancel()  // outside the lock
    }

    func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.fire = nil
            defer { state.task = nil }
            return state.task
        }
        task?.cancel()
    }
}

// MARK: - Examples

// 12 minutes, as `HangLimit` gives the other suites: `await clock.advanceAndSettle(by:)` returns once FutureLib's
// pool is idle in the whole process, and in a full parallel run the other suites keep it busy for as long
// as they run (Testing.md, "What `advanceAndSettle(by:)` does", says how long). The limit only bounds a hang.
@Suite(.timeLimit(.minutes(12)))
struct TestingGuideClockTests {
    @Test func retriesAfterEachTimeout() async {
        let clock = ManualClock()
        let server = FakeServer(clock: clock, answeringAfter: .seconds(60))
        let config = resilientConfig(clock: clock, fetch: server.fetch)
        await clock.advanceAndSettle(by: .seconds(60))  // three timeouts and two delays, in one call
        #expect(server.startTimes == [.zero, .seconds(6), .seconds(13)])
        #expect(throws: FutureError.timeout) { try config.result?.get() }
    }

    @Test func answersWithinTheTimeout() async throws {
        let clock = ManualClock()
        let server = FakeServer(clock: clock, answeringAfter: .seconds(3))
        let config = resilientConfig(clock: clock, fetch: server.fetch)
        await clock.advanceAndSettle(by: .seconds(3) - .nanoseconds(1))
        #expect(!config.isCompleted)
        await clock.advanceAndSettle(by: .nanoseconds(1))
        #expect(try config.result?.get() == Config(port: 80))
        #expect(server.startTimes == [.zero])
    }

    @Test func givesUpAfterFiveSeconds() async {
        let clock = ManualClock()
        let reply = Promise<Int>()
        let waiting = Task { try await reply.future.value(timeout: .seconds(5), clock: clock) }
        await clock.waitForPendingTimers()  // your task is waiting, its deadline armed
        await clock.advanceAndSettle(by: .seconds(5))
        await #expect(throws: FutureError.timeout) { try await waiting.value }
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func ownClock() async {
        let request = CancellationRequest(cancelAfter: .milliseconds(10), clock: ContinuousTimerClock())
        await request.token.wait()
        #expect(request.isCancellationRequested)

        let rearmed = CancellationRequest(cancelAfter: .milliseconds(10), clock: ContinuousTimerClock())
        rearmed.cancel(after: .seconds(3600))  // moves its task's deadline
        rearmed.cancel()  // stops it
        #expect(rearmed.isCancellationRequested)
    }
}
