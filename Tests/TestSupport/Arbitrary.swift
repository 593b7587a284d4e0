import Foundation

/// Inputs for the property tests of "every number has a meaning": values drawn from the whole
/// input space of a parameter, with its edges first and then about one draw in three from them.
///
/// A small generator of the package's own rather than a property-testing library: the root package
/// has no dependencies, the spaces are small and known (a `Duration` is an `Int128` of
/// attoseconds, a `Double` a bit pattern), and what finds the bugs is the edges, listed here,
/// which a failing case names with its seed.
///
/// ```swift
/// var arbitrary = Arbitrary(seed: 1)
/// for delay in arbitrary.durations(PropertyCases.count) { _ = delay }
/// ```
package struct Arbitrary {
    private var random: SplitMix64

    package init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    // MARK: - Edges

    /// The `Int64` edges: the extremes, zero, one either side of zero and of the extremes, and the
    /// edges of a second counted in nanoseconds and attoseconds.
    package static let int64Edges: [Int64] = [
        0, 1, -1, 2, -2, .max, .min, .max - 1, .min + 1, .max / 2, .min / 2,
        999_999_999, 1_000_000_000, 999_999_999_999_999_999, 1_000_000_000_000_000_000,
        -999_999_999_999_999_999, -1_000_000_000_000_000_000, Int64(Int32.max), Int64(UInt32.max),
    ]

    /// The `Int` edges.
    package static let intEdges: [Int] = int64Edges.map { Int(truncatingIfNeeded: $0) } + [Int.max, Int.min]

    /// The `Duration` edges: both signs of every extreme the public initialisers build, one
    /// attosecond either side of zero, and the edges of Dispatch's range (about 292 years of
    /// nanoseconds) and of `components` (`.seconds(Int64.max)`).
    package static let durationEdges: [Duration] = [
        .zero, Duration(attoseconds: 1), Duration(attoseconds: -1), .nanoseconds(1), .nanoseconds(-1),
        .seconds(1), .seconds(-1), .seconds(Int64.max), .seconds(Int64.min),
        .seconds(Int64.max) - Duration(attoseconds: 1), .seconds(Int64.max) + Duration(attoseconds: 1),
        .seconds(Int64.min) + Duration(attoseconds: 1), .seconds(Int64.min) - Duration(attoseconds: 1),
        Duration(secondsComponent: .max, attosecondsComponent: .max),
        Duration(secondsComponent: .min, attosecondsComponent: .min),
        Duration(secondsComponent: .max, attosecondsComponent: 999_999_999_999_999_999),
        .nanoseconds(Int64.max), .nanoseconds(Int64.min), .milliseconds(Int64.max), .microseconds(Int64.max),
        .seconds(Int64(Int.max / 1_000_000_000)), .seconds(Int64(UInt64.max / 2 / 1_000_000_000)),
        .seconds(Int64(Int.max / 1_000_000_000) / 2), .seconds(Int64(Int.max / 1_000_000_000) / 2 - 1),
        Duration(attoseconds: .max), Duration(attoseconds: .min), Duration(attoseconds: .max - 1),
        Duration(attoseconds: .min + 1),
    ]

    /// The `Double` edges: NaN (quiet and signalling), both infinities and zeros, subnormals, the
    /// finite extremes, and the neighbours of 0 and 1.
    package static let doubleEdges: [Double] = [
        .nan, .signalingNaN, -.nan, .infinity, -.infinity, 0, -0.0, 1, -1, 0.5, 2,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, .leastNormalMagnitude.nextDown,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1.0.nextUp, 1.0.nextDown, 0.0.nextUp,
        .ulpOfOne, 1e300, -1e300, 1e-300,
    ]

    // MARK: - Draws

    /// `count` integers: every edge, then draws.
    package mutating func int64s(_ count: Int) -> [Int64] {
        Self.int64Edges + (0..<count).map { _ in int64() }
    }

    package mutating func int64() -> Int64 {
        switch random.below(3) {
        case 0: Self.int64Edges[random.below(Self.int64Edges.count)]
        case 1:
            Int64(truncatingIfNeeded: random.next() >> UInt64(random.below(64)))  // every magnitude
                &* (random.chance(50) ? 1 : -1)
        default: Int64(truncatingIfNeeded: random.next())
        }
    }

    /// `count` integers: every edge, then draws.
    package mutating func ints(_ count: Int) -> [Int] {
        Self.intEdges + (0..<count).map { _ in int() }
    }

    package mutating func int() -> Int {
        random.chance(10) ? Self.intEdges[random.below(Self.intEdges.count)] : Int(truncatingIfNeeded: int64())
    }

    /// `count` durations: every edge, then draws.
    package mutating func durations(_ count: Int) -> [Duration] {
        Self.durationEdges + (0..<count).map { _ in duration() }
    }

    /// A duration from the whole space: edges, both components drawn, or any `Int128` of
    /// attoseconds, of any magnitude.
    package mutating func duration() -> Duration {
        switch random.below(4) {
        case 0:
            return Self.durationEdges[random.below(Self.durationEdges.count)]
        case 1:
            return Duration(secondsComponent: int64(), attosecondsComponent: int64())
        case 2:
            let bits = Int128(truncatingIfNeeded: random.next()) << 64 | Int128(random.next())
            return Duration(attoseconds: bits >> Int128(random.below(128)))
        default:
            return .nanoseconds(int64() >> Int64(random.below(64)))  // the delays programs use
        }
    }

    /// `count` doubles: every edge, then draws.
    package mutating func doubles(_ count: Int) -> [Double] {
        Self.doubleEdges + (0..<count).map { _ in double() }
    }

    /// A double from the whole space: edges, any bit pattern, or a value in `0..<1`.
    package mutating func double() -> Double {
        switch random.below(3) {
        case 0: Self.doubleEdges[random.below(Self.doubleEdges.count)]
        case 1: Double(bitPattern: random.next())
        default: Double(random.next() >> 11) * 0x1p-53
        }
    }

    /// One of `elements`.
    package mutating func element<T>(of elements: [T]) -> T {
        elements[random.below(elements.count)]
    }
}

/// How many drawn cases each property runs, beyond its edges: 200, or `FUTURELIB_STRESS_ITERATIONS`
/// (`make stress`).
package enum PropertyCases {
    package static var count: Int { Stress.override ?? 200 }
}

/// In the child process of an exit test: stops it, with `message` on standard error, when
/// `condition` is false. (`#expect` does not report from a child process; a failed property
/// shows as its exit status and this message.)
package func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard !condition else { return }
    FileHandle.standardError.write(Data(("property failed: " + message() + "\n").utf8))
    exit(1)
}

/// In the child process of an exit test: stops it with a message after `seconds` of a quiet
/// machine (ten times as long under `make stress`), so that a property that loops forever, or a
/// wait that never ends, fails instead of hanging the run.
///
/// The seconds are counted on ``LoadScaledClock``: on a machine busy with other work each second
/// counts for less, so the verdict does not depend on how loaded the machine is; on a quiet one a
/// hang still fails after `seconds`.
package func stopIfStuck(after seconds: Int = 120) {
    let seconds = Stress.override == nil ? seconds : seconds * 10
    let thread = Thread {
        LoadScaledClock.sleep(seconds: seconds)
        FileHandle.standardError.write(Data("property failed: still running after \(seconds) s (load-scaled)\n".utf8))
        exit(2)
    }
    thread.stackSize = 1 << 18
    thread.start()
}

/// Seconds of a quiet machine: each second of wall-clock time counts as 1 / ``slowdown(loadPerProcessor:)``
/// of the load per processor (`getloadavg`'s one-minute average over the processors this process
/// sees). For the watchdogs that tell a hang from a slow run; never for a measurement.
///
/// The slowdown is capped at ``maximumSlowdown``: a hang may itself keep the load up (a thread
/// spinning in a loop counts in it), and on a machine that stays loaded a watchdog without a cap
/// would wait in proportion to the load, so a real hang would never be reported.
package enum LoadScaledClock {
    /// The most a load stretches a watchdog: a hang fails at most this many times later than on a
    /// quiet machine.
    package static let maximumSlowdown = 10.0

    /// How many seconds of wall-clock time count as one second of a quiet machine, at `load` per
    /// processor: the load, at least 1, at most ``maximumSlowdown`` (1 for a load that is not a
    /// number).
    package static func slowdown(loadPerProcessor load: Double) -> Double {
        guard load > 1 else { return 1 }  // also NaN
        return min(load, maximumSlowdown)
    }

    /// ``slowdown(loadPerProcessor:)`` of the load now.
    package static var slowdown: Double { slowdown(loadPerProcessor: loadPerProcessor) }

    /// Blocks the calling thread until `seconds` of load-scaled time have passed: at most
    /// ``maximumSlowdown`` times `seconds` of wall-clock time.
    package static func sleep(seconds: Int) {
        var elapsed = 0.0
        while elapsed < Double(seconds) {
            Thread.sleep(forTimeInterval: 1)
            elapsed += 1 / slowdown
        }
    }

    /// The one-minute load average per processor; 0 when the system does not say.
    package static var loadPerProcessor: Double {
        var load = [0.0]
        guard getloadavg(&load, 1) == 1 else { return 0 }
        return load[0] / Double(max(1, ProcessInfo.processInfo.activeProcessorCount))
    }
}

/// A duration's exact value, for failure messages: `Duration`'s own description goes through
/// `components`, which traps past `.seconds(Int64.max)`.
package func describe(_ duration: Duration) -> String {
    "\(duration.attoseconds) attoseconds"
}
