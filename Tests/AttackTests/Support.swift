import Dispatch
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The attack suite's own helpers: it imports FutureLib and Cancellation as a client package does
// (no `@testable`, no TestSupport, which sees `package` symbols), so everything it needs is here.

/// How deep the depth attacks build their chains: 10⁶ under `make stress`
/// (`FUTURELIB_STRESS_ITERATIONS` set), 2×10⁴ in `make test`, 5×10³ under a sanitizer. Every one
/// of them is far beyond what recursion survives on a 512 KB stack: about a thousand stream stages
/// without a sanitizer, fewer under one, whose frames are several times larger. A sanitizer's run
/// looks for races and memory errors, which a shallower chain shows as well, and the depth attacks
/// run one child process at a time, each many times slower under it.
enum AttackSize {
    static let isStress = ProcessInfo.processInfo.environment["FUTURELIB_STRESS_ITERATIONS"] != nil

    static let depth = isStress ? 1_000_000 : isSanitized ? 5_000 : 20_000

    /// Whether this process runs under ThreadSanitizer or AddressSanitizer (told from the symbols
    /// their runtimes add, so the suite is built as a user builds it).
    static let isSanitized: Bool = {
        guard let process = dlopen(nil, RTLD_NOW) else { return false }
        return dlsym(process, "__tsan_init") != nil || dlsym(process, "__asan_init") != nil
    }()
}

/// The stack size of Apple's secondary threads, which the depth attacks run on.
let smallStack = 512 * 1024

/// Runs `body` on a new thread with a `stackSize`-byte stack and blocks until it returned. For the
/// bodies of exit tests, which run in a child process: a stack overflow there fails one test.
func onSmallStack(_ stackSize: Int = smallStack, _ body: @escaping @Sendable () -> Void) {
    let work = Unmanaged.passRetained(ThreadWork(body)).toOpaque()
    #if canImport(Darwin)
    var thread: pthread_t? = nil
    #else
    var thread = pthread_t()
    #endif
    let status = withUnsafeTemporaryAllocation(of: pthread_attr_t.self, capacity: 1) { buffer in
        let attributes = buffer.baseAddress!
        pthread_attr_init(attributes)
        defer { pthread_attr_destroy(attributes) }
        pthread_attr_setstacksize(attributes, stackSize)
        return pthread_create(
            &thread,
            attributes,
            { raw in
                Unmanaged<ThreadWork>.fromOpaque(raw!).takeRetainedValue().body()
                return nil
            },
            work
        )
    }
    precondition(status == 0, "pthread_create failed")
    #if canImport(Darwin)
    pthread_join(thread!, nil)
    #else
    pthread_join(thread, nil)
    #endif
}

/// The body of a thread that ``onSmallStack(_:_:)`` starts.
private final class ThreadWork: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// Ends the (child) process with a failure after `seconds` of a quiet machine: an exit test whose
/// body would hang fails instead.
///
/// The seconds are load-scaled, as TestSupport's `stopIfStuck(after:)` counts them: each wall-clock
/// second counts as 1 / ``AttackLimit/slowdown`` (at most ten times less), so that a child that a
/// busy machine slows down is not taken for a hang. Counted on a thread of its own, which the
/// blocking attacks cannot starve (they block the global queue's threads).
func failAfter(seconds: Int) {
    let thread = Thread {
        var counted = 0.0
        while counted < Double(seconds) {
            Thread.sleep(forTimeInterval: 1)
            counted += 1 / AttackLimit.slowdown
        }
        FileHandle.standardError.write(Data("attack: still running after \(seconds) s (load-scaled): a hang\n".utf8))
        exit(3)
    }
    thread.stackSize = 1 << 18
    thread.start()
}

/// A timeout for a wait that is meant to end before it (a value, a cancellation, a timer that is
/// certain to come): `duration` of a quiet machine, times ten, the most a load stretches a
/// watchdog here (``AttackLimit``). Such a wait returns as soon as its outcome comes; a fixed
/// bound would fail a correct run on a machine busy with other work.
func patient(_ duration: Duration) -> Duration {
    duration * AttackLimit.maximumSlowdown
}

/// A value shared by threads.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R {
        storage.withLock { body(&$0) }
    }
}

/// Counts the deallocations of the ``Probe``s it makes: capture one in a closure and the count
/// says whether the closure was released.
final class ReleaseCounter: Sendable {
    private let count = Atomic(0)

    var released: Int { count.load(ordering: .acquiring) }

    func make() -> Probe { Probe(self) }

    fileprivate func bump() { count.add(1, ordering: .releasing) }
}

/// An object whose deallocation a ``ReleaseCounter`` counts.
final class Probe: Sendable {
    private let counter: ReleaseCounter

    fileprivate init(_ counter: ReleaseCounter) { self.counter = counter }

    /// Something to call so that a closure really captures the probe.
    func touch() {}

    deinit { counter.bump() }
}

/// A weak reference readable from any thread.
final class Weak<Object: AnyObject & Sendable>: Sendable {
    private let storage: Mutex<WeakBox>

    private struct WeakBox: @unchecked Sendable {
        // Sendable: `Object` is; the box lives only inside the mutex.
        weak var object: Object?
    }

    init(_ object: Object) {
        storage = Mutex(WeakBox(object: object))
    }

    var isAlive: Bool { storage.withLock { $0.object != nil } }
}

/// The resident set of this process in bytes (Linux `/proc/self/statm`); nil elsewhere.
func residentBytes() -> Int? {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

struct AttackError: Error, Equatable {}

/// The attack suites, one at a time: their cases run in child processes that each take a core for
/// seconds, and several at once would starve the rest of the test run.
@Suite(.serialized) enum Attacks {}

/// Minutes for an attack suite's `.timeLimit`, a guard against a hang that never measures a time:
/// `minutes` on a quiet machine, times the load per processor when the run started, so that a
/// machine busy with other work does not fail a slow but correct run; at most ten times, as
/// TestSupport's `LoadScaledClock` caps it, so that a hang still fails in bounded time on a machine
/// that stays loaded. (Its own copy: these files type-check against the public modules alone.)
enum AttackLimit {
    static func minutes(_ minutes: Int) -> Int {
        Int((Double(minutes) * slowdown).rounded(.up))
    }

    /// The most a load stretches a watchdog.
    static let maximumSlowdown = 10.0

    /// The load per processor now, at least 1, at most ``maximumSlowdown``.
    static var slowdown: Double {
        var load = [0.0]
        guard getloadavg(&load, 1) == 1 else { return 1 }
        let perProcessor = load[0] / Double(max(1, ProcessInfo.processInfo.activeProcessorCount))
        return perProcessor > 1 ? min(perProcessor, maximumSlowdown) : 1  // 1 for NaN too
    }
}
