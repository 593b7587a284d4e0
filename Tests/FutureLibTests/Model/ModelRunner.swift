import Foundation
import FutureLib
import FutureTestSupport
import TestSupport

/// Runs scenarios on ``ModelScenario/threadCount`` long-lived dedicated threads: per seed,
/// thread 0 builds a fresh ``ModelWorld``, the threads are released together through a
/// spinning barrier and run their operations, then thread 0 checks the outcome against
/// ``ModelChecker`` while the others wait.
enum ModelRunner {
    /// The seeds to run: `FUTURELIB_MODEL_SEED` (one seed, to replay a failure), else
    /// `FUTURELIB_MODEL_SEEDS` seeds from 1 (`make stress` sets 10,000), else `defaultCount`.
    static func seeds(defaultCount: Int) -> [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let seed = environment["FUTURELIB_MODEL_SEED"].flatMap({ UInt64($0) }) { return [seed] }
        let count = environment["FUTURELIB_MODEL_SEEDS"].flatMap { Int($0) } ?? defaultCount
        return (1...UInt64(max(count, 1))).map { $0 }
    }

    /// Runs every seed; returns the failure reports (each with its seed and operation list),
    /// at most `limit` of them.
    static func run(seeds: [UInt64], limit: Int = 5) async -> [String] {
        let failures = Locked<[String]>([])
        let current = Locked<(ModelScenario, ModelWorld)?>(nil)
        let start = SpinBarrier(parties: ModelScenario.threadCount)
        let done = SpinBarrier(parties: ModelScenario.threadCount)
        let checked = DispatchSemaphore(value: 0)
        await onThreads(ModelScenario.threadCount) { thread in
            for seed in seeds {
                if thread == 0 {
                    current.withLock { $0 = (ModelScenario(seed: seed), ModelWorld()) }
                }
                start.arriveAndWait()
                let (scenario, world) = current.value!
                world.workers.withLock { $0[thread] = ThreadID.current }
                start.arriveAndWait()  // every worker is known before the first handler can run
                for operation in scenario.operations(of: thread) { world.perform(operation) }
                done.arriveAndWait()
                if thread == 0 {
                    let problems = ModelChecker(scenario: scenario, world: world).check()
                    if !problems.isEmpty {
                        let report = "\(scenario)\nviolations:\n" + problems.map { "  \($0)" }.joined(separator: "\n")
                        print("Model failure: \(report)")
                        failures.withLock { if $0.count < limit { $0.append(report) } }
                    }
                    current.withLock { $0 = nil }
                    for _ in 1..<ModelScenario.threadCount { checked.signal() }
                } else {
                    checked.wait()  // sleep, not spin, while thread 0 checks and waits for timers
                }
            }
        }
        return failures.value
    }
}
