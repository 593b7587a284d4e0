#if canImport(Glibc)
public import Glibc  // public: `ThreadIdentity.current` is inlinable into its users
#elseif canImport(Musl)
public import Musl
#elseif canImport(Darwin)
public import Darwin
#elseif os(Windows)
public import WinSDK
#endif

/// Which thread is calling: enough to tell "the thread that runs the handlers" from any other.
///
/// The cancelling thread is alive for as long as its identity is kept (during `cancel()`), so a
/// later thread reusing the same identity can never be mistaken for it. One thread-local read,
/// where a task-local frame costs an allocation per `cancel()`.
@usableFromInline
package struct ThreadIdentity: Equatable, Sendable {
    /// The platform's identity of the thread.
    @usableFromInline package let raw: UInt

    @inlinable
    package init(raw: UInt) {
        self.raw = raw
    }

    @inlinable
    package static var current: ThreadIdentity {
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
