import AsyncAlgorithms
import Foundation
import FutureLib
import Synchronization

// How a schedule is fed to both libraries, in lockstep: each event goes to FutureLib's
// promises (whose operators publish at once, on `.synchronous`) and to swift-async-algorithms'
// base sequences (consumed by a task that always asks for the next element); the test then
// waits until the oracle has published as many results as FutureLib, and goes on.

/// The error a schedule's failures carry, told apart by its code.
struct OracleFailure: Error, Equatable {
    let code: Int
}

/// Marks, as the unit tests' tapes write them: a value as itself, an error as `✕` and its
/// code, the end as `|`.
final class Marks: Sendable {
    private let marks = Mutex<[String]>([])

    init() {}

    func append(_ mark: String) {
        marks.withLock { $0.append(mark) }
        Changes.shared.notify()
    }

    func append(_ error: any Error) {
        append(Self.mark(error))
    }

    static func mark(_ error: any Error) -> String {
        switch error {
        case let failure as OracleFailure: "✕\(failure.code)"
        case is CancellationError: "✕c"
        default: "✕?"
        }
    }

    var all: [String] { marks.withLock { $0 } }
    var count: Int { marks.withLock { $0.count } }

    /// Whether an end or an error was marked: what ends a sequence of swift-async-algorithms.
    var hasEnded: Bool { marks.withLock { $0.contains { $0 == "|" || $0.hasPrefix("✕") } } }

    /// The marks up to the first end or error, included: what the oracle can be compared with
    /// (after an error, swift-async-algorithms has ended and FutureLib goes on, by design).
    var untilEnd: [String] {
        let all = self.all
        guard let end = all.firstIndex(where: { $0 == "|" || $0.hasPrefix("✕") }) else { return all }
        return Array(all[...end])
    }
}

extension FutureStream {
    /// Marks every result and the end of this stream, as they are published.
    func record(_ describe: @escaping @Sendable (Value) -> String) -> Marks {
        let marks = Marks()
        onComplete(on: .synchronous) { result in
            switch result {
            case .success(let value): marks.append(describe(value))
            case .failure(let error): marks.append(error)
            }
        }
        onFinish(on: .synchronous) { marks.append("|") }
        return marks
    }
}

/// Consumes `sequence` in a task that always asks for the next element, marking each, and the
/// end or the error.
func consume<S: AsyncSequence & Sendable>(
    _ sequence: S,
    _ describe: @escaping @Sendable (S.Element) -> String
) -> (Marks, Task<Void, Never>) {
    let marks = Marks()
    let task = Task {
        do {
            for try await element in sequence { marks.append(describe(element)) }
            marks.append("|")
        } catch {
            marks.append(error)
        }
    }
    return (marks, task)
}

/// One input of a schedule, written to both libraries: a `StreamPromise` for FutureLib, and a
/// base sequence for swift-async-algorithms that counts the elements pulled from it.
final class Input<Element: Sendable>: Sendable {
    let promise = StreamPromise<Element>(capacity: 0)
    private let stream: AsyncThrowingStream<Element, any Error>
    private let continuation: AsyncThrowingStream<Element, any Error>.Continuation
    private let counts = Mutex((sent: 0, pulled: 0, asked: 0, isFinished: false))
    private let last = Mutex<String?>(nil)

    init() {
        (stream, continuation) = AsyncThrowingStream.makeStream()
    }

    var sequence: Pulled<Element> { Pulled(input: self) }
    var isFinished: Bool { counts.withLock { $0.isFinished } }
    /// Whether the oracle has pulled every element sent.
    var isDrained: Bool { counts.withLock { $0.pulled >= $0.sent } }
    var pulled: Int { counts.withLock { $0.pulled } }
    /// Whether the oracle asks for the next element, done with the one it pulled last.
    var isAsking: Bool { counts.withLock { $0.asked > $0.pulled } }
    /// The element pulled last, described as its mark (`nil` before the first).
    var lastPulled: String? { last.withLock { $0 } }

    func send(_ element: Element) {
        counts.withLock { $0.sent += 1 }
        promise.fulfill(element)
        continuation.yield(element)
    }

    /// A failure ends a sequence of swift-async-algorithms; FutureLib's stream gets the error and
    /// is finished with it, so that both see the same input.
    func fail(_ code: Int) {
        counts.withLock { $0.isFinished = true }
        promise.reject(OracleFailure(code: code))
        promise.finish()
        continuation.finish(throwing: OracleFailure(code: code))
    }

    func finish() {
        counts.withLock { $0.isFinished = true }
        promise.finish()
        continuation.finish()
    }

    fileprivate func makeIterator() -> AsyncThrowingStream<Element, any Error>.Iterator {
        stream.makeAsyncIterator()
    }

    fileprivate func asked() {
        counts.withLock { $0.asked += 1 }
        Changes.shared.notify()
    }

    fileprivate func pulled(_ element: Element) {
        last.withLock { $0 = "\(element)" }
        counts.withLock { $0.pulled += 1 }
        Changes.shared.notify()
    }
}

/// An input's base sequence for swift-async-algorithms.
struct Pulled<Element: Sendable>: AsyncSequence, Sendable {
    let input: Input<Element>

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.Iterator
        let input: Input<Element>

        mutating func next() async throws -> Element? {
            input.asked()
            let element = try await base.next()
            if let element { input.pulled(element) }
            return element
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: input.makeIterator(), input: input)
    }
}

/// Wakes the tasks waiting for a mark or a pull: each one checks its condition again.
final class Changes: Sendable {
    private let waiters = Mutex<[CheckedContinuation<Void, Never>]>([])

    static let shared = Changes()

    func notify() {
        let waiting = waiters.withLock { waiters in
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Suspends until `condition` holds, or 10 seconds of a quiet machine passed (then the
    /// comparison shows what is missing). A ticker (``lockstep``) wakes it now and then, so that it
    /// sees the time pass.
    ///
    /// The seconds are load-scaled (``Load``): the oracle's task needs a cooperative thread, which
    /// a machine busy with other builds may not give it for seconds; a fixed 5 s could then compare
    /// a schedule the oracle had not finished, and fail a correct run.
    func wait(until condition: @Sendable () -> Bool) async {
        var counted = 0.0
        var last = ContinuousClock.now
        while !condition() {
            let now = ContinuousClock.now
            let (wholeSeconds, attoseconds) = (now - last).components
            counted += (Double(wholeSeconds) + Double(attoseconds) / 1e18) / Load.slowdown
            last = now
            if counted > 10 { return }
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let isReady = waiters.withLock { waiters -> Bool in
                    if condition() { return true }
                    waiters.append(waiter)
                    return false
                }
                if isReady { waiter.resume() }
            }
        }
    }
}

func waitUntil(_ condition: @Sendable () -> Bool) async {
    await Changes.shared.wait(until: condition)
}

/// The machine's load, for the bounds that tell a stuck schedule from a slow one (never a
/// measurement): the one-minute load average per processor, at least 1, at most 10, so that a stuck
/// schedule still ends the wait.
enum Load {
    static var slowdown: Double {
        var load = [0.0]
        guard getloadavg(&load, 1) == 1 else { return 1 }
        let perProcessor = load[0] / Double(max(1, ProcessInfo.processInfo.activeProcessorCount))
        return perProcessor > 1 ? min(perProcessor, 10) : 1  // 1 for NaN too
    }

    /// Minutes for the suite's `.timeLimit`: `minutes` of a quiet machine, times the load when the
    /// run started.
    static func minutes(_ minutes: Int) -> Int {
        Int((Double(minutes) * slowdown).rounded(.up))
    }
}

/// Runs a schedule in lockstep: each step feeds one event to both libraries; then, when
/// `beforeNext` allows, the oracle is given time to publish as many marks as FutureLib did.
/// Stops at FutureLib's first end or error; then ends every input and waits for the oracle's end.
/// Returns both marks up to the end.
func lockstep(
    ours: Marks,
    oracle: Marks,
    steps: [@Sendable () -> Void],
    settled: @escaping @Sendable () -> Bool = { true },
    finishAll: @Sendable () -> Void
) async -> (ours: [String], oracle: [String]) {
    let ticker = Task {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(20))
            Changes.shared.notify()
        }
    }
    defer { ticker.cancel() }
    for step in steps {
        step()
        await waitUntil(settled)
        // FutureLib's stream goes on after an error (here: the end follows it); the oracle ends.
        let expected = ours.untilEnd.count
        await waitUntil { oracle.count >= expected || oracle.hasEnded }
        if ours.hasEnded { break }
    }
    finishAll()
    await waitUntil(settled)
    await waitUntil { oracle.hasEnded }
    return (ours.untilEnd, oracle.untilEnd)
}

/// The seeded generator of the schedules (SplitMix64), so a failing seed replays.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}

/// A `Clock` for swift-async-algorithms that moves only when the test moves it, in step with a
/// `ManualClock`. `sleep` returns at once: `throttle` sleeps only to publish its held value at
/// the end, which is compared as a value, not as a time.
struct OracleClock: Clock {
    struct Instant: InstantProtocol {
        let offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    final class Time: Sendable {
        let now = Mutex((offset: Duration.zero, reads: 0))
    }

    let time = Time()

    /// Counts its reads: `throttle` reads the time once per element it pulled, after pulling it
    /// (and once before the first), so the test moves the clock only after that read.
    var now: Instant {
        let offset = time.now.withLock { time in
            time.reads += 1
            return time.offset
        }
        Changes.shared.notify()
        return Instant(offset: offset)
    }

    var reads: Int { time.now.withLock { $0.reads } }
    var minimumResolution: Duration { .zero }

    func advance(by duration: Duration) {
        time.now.withLock { $0.offset += duration }
    }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
    }
}
