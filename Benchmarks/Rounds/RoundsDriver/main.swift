// A release driver for the scenarios of Documentation/Performance.md: the multi-threaded ones (10, 11, 12, 14,
// here) and the single-thread ones (1–7, 9, SingleThreadScenarios.swift), measured as an outside harness
// does: FutureLib and its peer in ONE process, in alternating rounds
// (FutureLib then peer, then peer then FutureLib, …), and the median of the per-round ratios. On a machine shared with other
// work, alternating keeps both sides under the same load; a ratio of medians from two separate runs does not.
//
//     RoundsDriver [--json] [rounds] [scenario…]      (default: 15 rounds, every scenario)
//
// It prints, per scenario, the median wall-clock time per operation of each side and the median ratio (FutureLib /
// peer), then the same for the process's CPU time, which other programs' load does not inflate.
// Not a test: `make bench-report` (Scripts/bench-report.py) runs it with `--json` for the report's ratios: the
// ordo-one/benchmark harness (`make bench`) measures each benchmark on its own and cannot alternate two of them.
//
//     RoundsDriver --in-flight futurelib|tasks [count]    (scenario 15's memory, ServerScenario.swift)
//     RoundsDriver --server-allocations                   (scenario 15's FutureLib mallocs, step by step)

import Dispatch
import FutureLib
import MallocCounter
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Keeps the optimizer from dropping a value, at the cost of one call.
@inline(never)
func sink(_ value: Int) {
    if value == -1 { print(value) }
}

/// Counts jobs down to zero on any thread; the last one wakes the waiting thread.
final class Countdown: Sendable {
    // Sendable: an Atomic and a DispatchSemaphore, both thread-safe.
    private let remaining: Atomic<Int>
    private let finished = DispatchSemaphore(value: 0)

    init(_ count: Int) { remaining = Atomic(count) }

    func arrive() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { finished.signal() }
    }

    func wait() { finished.wait() }
}

/// Runs `body(thread)` on `threads` threads at once: the caller and `threads - 1` jobs on
/// `DispatchQueue.global()`, released together once every one of them is running, so that they really
/// overlap (`DispatchQueue.concurrentPerform` may run every iteration on the caller when its workers are
/// slow to start, as on a loaded machine). Returns when all have finished.
func runTogether(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let start = StartLine(threads)
    let done = DispatchGroup()
    for thread in 1..<max(threads, 1) {
        done.enter()
        DispatchQueue.global().async {
            start.arriveAndWait()
            body(thread)
            done.leave()
        }
    }
    start.arriveAndWait()
    body(0)
    done.wait()
}

/// A one-shot spinning barrier: each thread waits until `count` threads arrived.
final class StartLine: Sendable {
    // Sendable: an Atomic and a constant.
    private let arrived = Atomic<Int>(0)
    private let count: Int

    init(_ count: Int) { self.count = count }

    func arriveAndWait() {
        arrived.add(1, ordering: .acquiringAndReleasing)
        while arrived.load(ordering: .acquiring) < count {}
    }
}

/// One side of a scenario: `operations` per run, timed as a whole.
struct Side {
    var name: String
    var operations: Int
    /// Builds a run's input outside the timing and returns the timed part.
    var prepare: () throws -> () async throws -> Void

    init(name: String, operations: Int, run: @escaping () async throws -> Void) {
        self.name = name
        self.operations = operations
        self.prepare = { run }
    }

    /// A side whose input is built by `prepare`, untimed, before each run.
    static func prepared(
        name: String,
        operations: Int,
        _ prepare: @escaping () throws -> () async throws -> Void
    ) -> Side {
        var side = Side(name: name, operations: operations) {}
        side.prepare = prepare
        return side
    }
}

struct Scenario {
    /// The scenario's number in Documentation/Performance.md, and a suffix where it has several rows; what
    /// Scripts/bench-report.py reads (`--json`).
    var key: String
    var name: String
    var futureLib: Side
    var peer: Side
}

func seconds(_ duration: Duration) -> Double {
    let (s, attoseconds) = duration.components
    return Double(s) + Double(attoseconds) * 1e-18
}

/// CPU time of the whole process so far (every thread, user and system), in seconds: unlike wall-clock time it
/// does not grow while other programs have the cores, but it does count spinning and futex calls on a contended
/// lock. 0 where there is no process CPU clock.
func processCPUTime() -> Double {
    #if canImport(Glibc)
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    #else
    return 0
    #endif
}

/// Allocations per operation of one untimed run of `side` (its input, made by `prepare`, not counted); nil where
/// the driver cannot count them (not glibc). Counting is a shared atomic add per allocation, so it never overlaps
/// a timed run.
func mallocs(_ side: Side) async throws -> Double? {
    guard malloc_counter_is_available() != 0 else { return nil }
    let run = try side.prepare()
    malloc_counter_start()
    try await run()
    return Double(malloc_counter_stop()) / Double(side.operations)
}

/// Wall-clock and process CPU time per operation of one run of `side`.
func time(_ side: Side) async throws -> (wall: Double, cpu: Double) {
    let run = try side.prepare()
    let clock = ContinuousClock()
    let start = clock.now
    let cpuStart = processCPUTime()
    try await run()
    let cpu = processCPUTime() - cpuStart
    return (seconds(clock.now - start) / Double(side.operations), cpu / Double(side.operations))
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

// MARK: - Scenarios

/// 10. 10,000 `Future { async }`, then `sequence()` awaited vs 10,000 `Task { }` awaited.
func asyncFutures() -> Scenario {
    let count = 10_000
    return Scenario(
        key: "10",
        name: "10 Future { async } + sequence(), per future",
        futureLib: Side(name: "FutureLib", operations: count) {
            var futures: [Future<Int>] = []
            futures.reserveCapacity(count)
            for index in 0..<count { futures.append(Future { () async throws -> Int in index }) }
            sink(try await futures.sequence().value().count)
        },
        peer: Side(name: "Task { }", operations: count) {
            var tasks: [Task<Int, Never>] = []
            tasks.reserveCapacity(count)
            for index in 0..<count { tasks.append(Task { index }) }
            var sum = 0
            for task in tasks { sum &+= await task.value }
            sink(sum)
        }
    )
}

/// 11. `threads` threads each registering and unregistering on one shared token vs a token each.
func sharedToken(threads: Int) -> Scenario {
    let perThread = 50_000
    func run(_ tokens: [CancellationToken]) {
        runTogether(threads: tokens.count) { thread in
            let token = tokens[thread]
            for _ in 0..<perThread {
                if !token.onCancel({}).unregister() { sink(-1) }
            }
        }
    }
    let shared = CancellationRequest()
    let own = (0..<threads).map { _ in CancellationRequest() }
    return Scenario(
        key: "11-\(threads)",
        name: "11 onCancel + unregister, \(threads) thread(s), per operation",
        futureLib: Side(name: "one shared token", operations: threads * perThread) {
            run(Array(repeating: shared.token, count: threads))
        },
        peer: Side(name: "a token per thread", operations: threads * perThread) {
            run(own.map(\.token))
        }
    )
}

/// 12. 100,000 values through StreamPromise -> values -> for await vs AsyncStream (unbounded).
func streamValues() -> Scenario {
    let count = 100_000
    return Scenario(
        key: "12",
        name: "12 StreamPromise -> values -> for await, per value",
        futureLib: Side(name: "FutureLib", operations: count) {
            let promise = StreamPromise<Int>(capacity: 0)
            var iterator = promise.stream.values(buffering: .unbounded).makeAsyncIterator()
            let producer = Task {
                for value in 0..<count { promise.fulfill(value) }
                promise.finish()
            }
            var sum = 0
            while let value = try await iterator.next() { sum &+= value }
            sink(sum)
            await producer.value
        },
        peer: Side(name: "AsyncStream", operations: count) {
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
            let producer = Task {
                for value in 0..<count { continuation.yield(value) }
                continuation.finish()
            }
            var sum = 0
            for await value in stream { sum &+= value }
            sink(sum)
            await producer.value
        }
    )
}

/// 14. 100,000 empty jobs on `.default` vs `DispatchQueue.global()`.
func emptyJobs() -> Scenario {
    let count = 100_000
    return Scenario(
        key: "14",
        name: "14 empty jobs, per job",
        futureLib: Side(name: ".default", operations: count) {
            let countdown = Countdown(count)
            let context: DefaultExecutionContext = .default
            for _ in 0..<count { context.execute { countdown.arrive() } }
            countdown.wait()
        },
        peer: Side(name: "DispatchQueue.global()", operations: count) {
            let countdown = Countdown(count)
            let queue = DispatchQueue.global()
            for _ in 0..<count { queue.async { countdown.arrive() } }
            countdown.wait()
        }
    )
}

// MARK: - Main

// `RoundsDriver [--json] [rounds] [scenario…]`: "11" picks every scenario keyed 11 or 11-…, "11-2" only that one.
// With `--json`, one JSON object per scenario and line, for Scripts/bench-report.py.
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--server-allocations" {
    serverAllocations()
    exit(0)
}
if arguments.first == "--in-flight", arguments.count > 1 {
    await measureInFlight(side: arguments[1], count: arguments.dropFirst(2).first.flatMap { Int($0) } ?? 100_000)
    exit(0)
}
let json = arguments.contains("--json")
arguments.removeAll { $0 == "--json" }
let rounds = arguments.first.flatMap { Int($0) } ?? 15
let wanted = Set(arguments.dropFirst())
let scenarios = [
    promiseWithOneContinuation(), mapChain(), sequenceOfCompleted(), continuationOnAnotherThread(),
    registerUnregister(), cancelThousandHandlers(), valueOnCompleted(), asyncMap(), asyncFlatMap(), asyncRecover(),
    asyncOnSuccess(), asyncTraverse(), asyncFutureVersusTask(),
    asyncFutures(), sharedToken(threads: 1), sharedToken(threads: 2), streamValues(), emptyJobs(), limitedJobs(), oneJobAtATime(), serverRequests(),
    serverRequestsOnEveryProcessor(),
]
.filter { scenario in
    wanted.isEmpty || wanted.contains { scenario.key == $0 || scenario.key.hasPrefix($0 + "-") }
}

/// A JSON string literal; the names here hold no quote, backslash or control character to escape.
func quoted(_ text: String) -> String {
    precondition(!text.contains { $0 == "\"" || $0 == "\\" || $0.isNewline }, "escape \(text)")
    return "\"" + text + "\""
}

for scenario in scenarios {
    // One unmeasured round of each side first: first-use costs (pool threads, slabs) out of the figures.
    _ = try await time(scenario.futureLib)
    _ = try await time(scenario.peer)
    var ours: [Double] = []
    var theirs: [Double] = []
    var ratios: [Double] = []
    var oursCPU: [Double] = []
    var theirsCPU: [Double] = []
    var cpuRatios: [Double] = []
    for round in 0..<rounds {
        // Which side goes first alternates too: the second of a pair can run in a different state (caches, the
        // pool's threads just woken), and that must not count for either side.
        let a: (wall: Double, cpu: Double)
        let b: (wall: Double, cpu: Double)
        if round.isMultiple(of: 2) {
            a = try await time(scenario.futureLib)
            b = try await time(scenario.peer)
        } else {
            b = try await time(scenario.peer)
            a = try await time(scenario.futureLib)
        }
        ours.append(a.wall)
        theirs.append(b.wall)
        ratios.append(a.wall / b.wall)
        oursCPU.append(a.cpu)
        theirsCPU.append(b.cpu)
        cpuRatios.append(a.cpu / b.cpu)
    }
    // After the rounds, one counted run of each side (the JSON's and the report's malloc columns).
    let oursMallocs = try await mallocs(scenario.futureLib)
    let theirMallocs = try await mallocs(scenario.peer)
    func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
    if json {
        let fields: [(String, String)] = [
            ("key", quoted(scenario.key)), ("name", quoted(scenario.name)),
            ("ours", quoted(scenario.futureLib.name)), ("peer", quoted(scenario.peer.name)),
            ("operations", "\(scenario.futureLib.operations)"), ("rounds", "\(rounds)"),
            ("wall_ours_ns", "\(median(ours) * 1e9)"), ("wall_peer_ns", "\(median(theirs) * 1e9)"),
            ("ratio", "\(median(ratios))"), ("ratio_min", "\(ratios.min()!)"), ("ratio_max", "\(ratios.max()!)"),
            ("cpu_ours_ns", "\(median(oursCPU) * 1e9)"), ("cpu_peer_ns", "\(median(theirsCPU) * 1e9)"),
            ("cpu_ratio", "\(median(cpuRatios))"),
            ("mallocs_ours", oursMallocs.map { "\($0)" } ?? "null"),
            ("mallocs_peer", theirMallocs.map { "\($0)" } ?? "null"),
        ]
        print("{" + fields.map { "\(quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "}")
        continue
    }
    print(
        [
            scenario.name + ":",
            "wall \(scenario.futureLib.name) \(Int(median(ours) * 1e9)) ns,",
            "\(scenario.peer.name) \(Int(median(theirs) * 1e9)) ns,",
            "median ratio \(rounded(median(ratios)))× (min \(rounded(ratios.min()!)), max \(rounded(ratios.max()!)));",
            "CPU \(Int(median(oursCPU) * 1e9)) ns vs \(Int(median(theirsCPU) * 1e9)) ns,",
            "median ratio \(rounded(median(cpuRatios)))×;",
            "mallocs per operation \(oursMallocs.map { "\(rounded($0))" } ?? "–")",
            "vs \(theirMallocs.map { "\(rounded($0))" } ?? "–"); \(rounds) rounds",
        ].joined(separator: " ")
    )
}
