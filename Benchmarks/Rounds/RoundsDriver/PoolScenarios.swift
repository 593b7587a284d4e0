// The per-job cost of FutureLib's pool and of a capped context on it, against Dispatch (issue 44): scenario 14 (a
// burst of empty jobs on `.default` / `DispatchQueue.global()`, main.swift) and the two below. With scenario 10
// (`Future { async }` + `sequence()` / unstructured tasks) they are what `RoundsDriver 31 10 14` runs.

import Dispatch
import FutureLib

/// 14-limited. 100,000 empty jobs on a `LimitedExecutionContext(maxConcurrency: 1)` on `.default` vs a serial
/// `DispatchQueue`: a serial context's per-job cost (its lock, its queue, the slot's thread-local bookkeeping and the
/// pool's job around each).
func limitedJobs() -> Scenario {
    let count = 100_000
    let limited = LimitedExecutionContext(maxConcurrency: 1)
    let serial = DispatchQueue(label: "rounds.serial")
    return Scenario(
        key: "14-limited",
        name: "14 empty jobs on a serial context, per job",
        futureLib: Side(name: "LimitedExecutionContext(1)", operations: count) {
            let countdown = Countdown(count)
            for _ in 0..<count { limited.execute { countdown.arrive() } }
            countdown.wait()
        },
        peer: Side(name: "serial DispatchQueue", operations: count) {
            let countdown = Countdown(count)
            for _ in 0..<count { serial.async { countdown.arrive() } }
            countdown.wait()
        }
    )
}

/// 14-one. 10,000 empty jobs one at a time, each submitted when the last has run, on `.default` vs
/// `DispatchQueue.global()`: the hand-off to an idle pool and back (a spinning or woken thread), which each
/// `Future { async }` awaited alone pays.
func oneJobAtATime() -> Scenario {
    let count = 10_000
    func run(_ submit: (@escaping @Sendable () -> Void) -> Void) {
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<count {
            submit { done.signal() }
            done.wait()
        }
    }
    return Scenario(
        key: "14-one",
        name: "14 one empty job at a time, per job",
        futureLib: Side(name: ".default", operations: count) {
            let context: DefaultExecutionContext = .default
            run { context.execute($0) }
        },
        peer: Side(name: "DispatchQueue.global()", operations: count) {
            let queue = DispatchQueue.global()
            run { queue.async(execute: $0) }
        }
    )
}
