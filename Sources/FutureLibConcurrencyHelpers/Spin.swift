#if canImport(Glibc)
public import Glibc  // public: `spin(upTo:until:)` is inlinable into its users
#elseif canImport(Musl)
public import Musl
#elseif canImport(Darwin)
public import Darwin
#endif

/// A bounded spin: polls `done` until it is true or `nanoseconds` have passed, reading the clock,
/// and yielding the core (`sched_yield`), once every 64 polls.
///
/// The yield lets a thread waiting for this core run, often the very one that will make `done`
/// true: on a loaded two-core machine a spin without it ate the time slice of the thread it
/// waited for (Documentation/Internals.md, "The worker pool").
///
/// - Returns: Whether `done` became true, and how long the spin took, in nanoseconds.
@inlinable
package func spin(upTo nanoseconds: Int, until done: () -> Bool) -> (seen: Bool, elapsed: Int) {
    var start = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    while true {
        var seen = false
        for _ in 0..<64 where done() {
            seen = true
            break
        }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let elapsed = (now.tv_sec - start.tv_sec) * 1_000_000_000 + (now.tv_nsec - start.tv_nsec)
        if seen || elapsed >= nanoseconds { return (seen, elapsed) }
        sched_yield()
    }
}
