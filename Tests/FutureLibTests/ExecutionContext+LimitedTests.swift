import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct LimitedExecutionContextTests {
    /// Jobs that block until released, and record when they start and how many run at once.
    final class Jobs: Sendable {
        let started = Locked<[Int]>([])
        let running = Counter()
        let peak = Locked(0)
        let gates: [Signal]
        let finished = Counter()

        init(count: Int) {
            gates = (0..<count).map { _ in Signal() }
        }

        func submit(to context: some ExecutionContext) {
            for index in gates.indices {
                context.execute { [self] in
                    let now = running.increment()
                    peak.withLock { $0 = max($0, now) }
                    started.withLock { $0.append(index) }
                    gates[index].wait()
                    running.decrement()
                    finished.increment()
                }
            }
        }

        func startedCount() -> Int { started.value.count }
    }

    /// A base with a thread per job, so only the limit caps concurrency (jobs here block).
    static let base = ThreadPerJob()

    @Test func `never runs more jobs at once than maxConcurrency`() async {
        let context = LimitedExecutionContext(maxConcurrency: 3, on: Self.base)
        #expect(context.maxConcurrency == 3)
        let jobs = Jobs(count: 12)
        jobs.submit(to: context)
        #expect(await eventually { jobs.startedCount() == 3 && context.runningCount == 3 })
        for index in 0..<12 {
            #expect(await eventually { jobs.started.value.contains(index) })
            jobs.gates[index].fire()
        }
        #expect(await eventually { jobs.finished.value == 12 })
        #expect(jobs.peak.value <= 3)
        #expect(await eventually { context.runningCount == 0 })
    }

    @Test func `starts jobs in submission order`() async {
        let context = LimitedExecutionContext(maxConcurrency: 1, on: Self.base)
        let order = Locked<[Int]>([])
        let done = Signal()
        for index in 0..<200 {
            context.execute {
                order.withLock { $0.append(index) }
                if index == 199 { done.fire() }
            }
        }
        #expect(await onDedicatedThread { done.wait() })
        #expect(order.value == Array(0..<200))
    }

    @Test func `starts queued jobs in submission order when slots free`() async {
        let context = LimitedExecutionContext(maxConcurrency: 2, on: Self.base)
        let jobs = Jobs(count: 6)
        jobs.submit(to: context)
        #expect(await eventually { jobs.startedCount() == 2 })
        #expect(Set(jobs.started.value) == [0, 1])
        jobs.gates[1].fire()
        #expect(await eventually { jobs.startedCount() == 3 })
        #expect(jobs.started.value.last == 2)
        jobs.gates[0].fire()
        #expect(await eventually { jobs.startedCount() == 4 })
        #expect(jobs.started.value.last == 3)
        for gate in jobs.gates { gate.fire() }
        #expect(await eventually { jobs.finished.value == 6 })
    }

    @Test func `a slot frees only when the job returns`() async {
        let context = LimitedExecutionContext(maxConcurrency: 1, on: Self.base)
        let jobs = Jobs(count: 2)
        jobs.submit(to: context)
        #expect(await eventually { jobs.startedCount() == 1 })
        try? await Task.sleep(for: .milliseconds(20))
        #expect(jobs.startedCount() == 1)  // the first still runs
        #expect(context.runningCount == 1)
        jobs.gates[0].fire()
        #expect(await eventually { jobs.startedCount() == 2 })
        jobs.gates[1].fire()
        #expect(await eventually { jobs.finished.value == 2 && context.runningCount == 0 })
    }

    @Test func `raising maxConcurrency starts queued jobs at once`() async {
        let context = LimitedExecutionContext(maxConcurrency: 1, on: Self.base)
        let jobs = Jobs(count: 5)
        jobs.submit(to: context)
        #expect(await eventually { jobs.startedCount() == 1 })
        context.maxConcurrency = 4
        #expect(context.maxConcurrency == 4)
        #expect(await eventually { jobs.startedCount() == 4 })  // while the first still runs
        #expect(Set(jobs.started.value) == [0, 1, 2, 3])  // the next three in line
        for gate in jobs.gates { gate.fire() }
        #expect(await eventually { jobs.finished.value == 5 })
        #expect(jobs.peak.value <= 4)
    }

    @Test func `lowering maxConcurrency lets running jobs finish and starts new ones only below the new cap`() async {
        let context = LimitedExecutionContext(maxConcurrency: 4, on: Self.base)
        let jobs = Jobs(count: 10)
        jobs.submit(to: context)
        #expect(await eventually { jobs.startedCount() == 4 })
        context.maxConcurrency = 2
        #expect(context.runningCount == 4)  // nothing is interrupted
        jobs.gates[0].fire()
        jobs.gates[1].fire()
        #expect(await eventually { jobs.finished.value == 2 })
        try? await Task.sleep(for: .milliseconds(20))
        #expect(jobs.startedCount() == 4)  // still 2 running: at the new cap, nothing new starts
        jobs.gates[2].fire()
        #expect(await eventually { jobs.startedCount() == 5 })
        #expect(jobs.started.value.last == 4)
        for index in 3..<10 {
            #expect(await eventually { jobs.started.value.contains(index) })
            #expect(jobs.running.value <= 2)
            jobs.gates[index].fire()
        }
        #expect(await eventually { jobs.finished.value == 10 && context.runningCount == 0 })
    }

    @Test func `on .synchronous the jobs run inline, one at a time`() {
        let context = LimitedExecutionContext(maxConcurrency: 1, on: .synchronous)
        let order = Locked<[Int]>([])
        for index in 0..<10_000 { context.execute { order.withLock { $0.append(index) } } }
        #expect(order.value == Array(0..<10_000))
        #expect(context.runningCount == 0)
    }

    @Test func `a job's captures are released once it ran, while later jobs still wait`() async {
        let context = LimitedExecutionContext(maxConcurrency: 1, on: Self.base)
        let counter = DeinitCounter()
        let firstGate = Signal()
        let holdGate = Signal()
        let holding = Signal()
        context.execute { firstGate.wait() }  // keeps the next jobs queued
        do {
            let capture = counter.make()
            context.execute { capture.touch() }
        }
        context.execute {
            holding.fire()
            holdGate.wait()
        }
        context.execute {}  // still queued while the job before it holds the only slot
        firstGate.fire()
        #expect(await onDedicatedThread { holding.wait() })
        #expect(await eventually { counter.deallocated == 1 })  // the queue did not keep it
        holdGate.fire()
        #expect(await eventually { context.runningCount == 0 })
    }

    @Test func `futures whose work runs on a limited context complete`() async throws {
        let context = LimitedExecutionContext(maxConcurrency: 2)
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<50 {
                group.addTask { try await Future(on: context) { index }.value() }
            }
            return try await group.reduce(0, +)
        }
        #expect(values == (0..<50).reduce(0, +))
    }
}
