#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif os(Windows)
import WinSDK
#endif

/// What a thread waiting for a spin lock (``RawLock``, ``SpinLock``) does between its attempts:
/// spin for the first ``spins``, then give up its processor: yield it (`sched_yield`) up to
/// ``yields`` attempts, then sleep 10 µs at a time.
///
/// ### Real-time waiters
/// A real-time thread (`SCHED_FIFO`, `SCHED_RR`) sleeps as soon as its spins are done: its yield
/// gives the processor only to threads of its own priority, never to a holder of a lower one that
/// it preempted on the same processor, so its yields only delayed the sleep that lets the holder
/// finish (Documentation/Internals.md, "Measurements behind the code", has the figures).
package enum SpinWait {
    /// Attempts spent spinning, without a system call: a holder that runs releases at once.
    package static let spins = 64
    /// Attempts after which a waiter that yields sleeps instead.
    package static let yields = 1_024

    /// What to do after failed attempt number `attempt`.
    package enum Step: Equatable {
        case spin
        case yield
        case sleep
    }

    /// The step after failed attempt number `attempt` (from 1), for a real-time thread or not.
    @inline(__always)
    package static func step(after attempt: Int, realTime: Bool) -> Step {
        if attempt < spins { return .spin }
        if realTime || attempt > yields { return .sleep }
        return .yield
    }

    /// Whether the calling thread runs under a real-time policy. A system call: asked once per
    /// wait, when the spins are done.
    package static var isRealTime: Bool {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        var policy: Int32 = 0
        var parameters = sched_param()
        guard pthread_getschedparam(pthread_self(), &policy, &parameters) == 0 else { return false }
        return policy == SCHED_FIFO || policy == SCHED_RR
        #else
        return false
        #endif
    }

    /// Carries out `step` (a yield or a sleep; a spin does nothing).
    @inline(__always)
    package static func pause(_ step: Step) {
        switch step {
        case .spin:
            break
        case .yield:
            #if os(Windows)
            Sleep(0)
            #elseif canImport(Glibc) || canImport(Musl) || canImport(Darwin)
            sched_yield()
            #endif
        case .sleep:
            #if os(Windows)
            Sleep(1)
            #elseif canImport(Glibc) || canImport(Musl) || canImport(Darwin)
            usleep(10)
            #endif
        }
    }

    /// The waiting loop of a spin lock: calls `tryLock` until it succeeds, pausing between attempts.
    @inline(__always)
    static func wait(until tryLock: () -> Bool) {
        var attempt = 0
        var realTime = false
        while !tryLock() {
            attempt += 1
            if attempt == spins { realTime = isRealTime }
            pause(step(after: attempt, realTime: realTime))
        }
    }
}
