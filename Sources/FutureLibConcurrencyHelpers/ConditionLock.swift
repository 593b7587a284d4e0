#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex with a condition variable, for the few places that must put a thread to sleep
/// (`Synchronization.Mutex` has no condition variable). The shape of NIO's `ConditionLock`.
// Sendable: the pthread mutex and condition are designed to be shared between threads; the
// pointers themselves are immutable after `init` and freed only in `deinit`.
package final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        precondition(pthread_mutex_init(mutex, nil) == 0)
        precondition(pthread_cond_init(condition, nil) == 0)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func lock() {
        pthread_mutex_lock(mutex)
    }

    package func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Runs `body` with the mutex held. Never call user code from `body`.
    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Wakes one thread sleeping in `wait`.
    package func signal() {
        pthread_cond_signal(condition)
    }

    /// Sleeps until signalled or `seconds` passed; false on timeout. The mutex must be held.
    package func wait(seconds: Int) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var deadline = now
        deadline.tv_sec += seconds
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }
}
