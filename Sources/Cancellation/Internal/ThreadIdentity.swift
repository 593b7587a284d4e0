#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif os(Windows)
import WinSDK
#endif

/// Which thread is calling: enough to tell "the thread that runs the handlers" from any other.
///
/// The cancelling thread is alive for as long as its identity is kept (during `cancel()`), so a
/// later thread reusing the same identity can never be mistaken for it. One thread-local read,
/// where a task-local frame cost an allocation and about a thousand instructions per `cancel()`.
struct ThreadIdentity: Equatable {
    /// The platform's identity of the thread.
    let raw: UInt

    static var current: ThreadIdentity {
        #if os(Windows)
        ThreadIdentity(raw: UInt(GetCurrentThreadId()))
        #elseif canImport(Glibc)
        ThreadIdentity(raw: UInt(pthread_self()))
        #elseif canImport(Musl) || canImport(Darwin)
        ThreadIdentity(raw: UInt(bitPattern: pthread_self()))
        #else
        ThreadIdentity(raw: 0)  // a platform without threads
        #endif
    }
}
