import TestSupport
import Testing

/// The test suite's own scheduling of heavy work (TestSupport's `HeavyGate`), which every race,
/// scale and depth test relies on.
@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct HeavyGateTests {
    /// Heavy jobs, groups of threads and small-stack jobs started at once run one after another.
    @Test func `heavy jobs, thread groups and small-stack jobs never overlap`() async {
        let running = Locked((now: 0, most: 0))
        let occupy: @Sendable () -> Void = {
            running.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            pause(.milliseconds(2))  // widens the window an overlap would need; nothing is timed
            running.withLock { $0.now -= 1 }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { await onHeavyThread(occupy) }
                group.addTask { await onThreads(2) { index in if index == 0 { occupy() } } }
                group.addTask { await onSmallStack(occupy) }
            }
        }
        #expect(running.value.now == 0)
        #expect(running.value.most == 1)
    }

    /// A task that prefers `DedicatedTaskExecutor` runs on the executor's own thread, before and after it
    /// suspends, never on the cooperative pool where the test itself runs.
    @Test func `a task preferring DedicatedTaskExecutor runs on its thread`() async {
        let executor = DedicatedTaskExecutor.shared
        let onItsThread = await Task(executorPreference: executor) {
            let before = executor.isCurrentThread
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(1))
            return [before, executor.isCurrentThread]
        }.value
        #expect(onItsThread == [true, true])
        #expect(!executor.isCurrentThread)
    }
}
