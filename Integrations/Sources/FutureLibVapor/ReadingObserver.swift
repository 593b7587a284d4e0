#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The ``ClientDisconnectObserver`` whose read the current thread is passing down its connection's pipeline.
///
/// Vapor answers most requests inside the read that completes them: its decoder, its responder and
/// ``RequestCancellationMiddleware`` all run within the observer's `channelRead`, on the connection's event loop.
/// The middleware then finds the request's connection here, without the lock and the hash of the table of all
/// connections (`make bench-http-instructions` counts the difference); it checks the connection's address against
/// the request's, so a request of another connection, delivered within this read, gets its own.
enum ReadingObserver {
    // A thread-specific slot, not a task-local: the read and the middleware run on an event loop's thread, outside
    // any task. `nil` when the process has no key left to give (`PTHREAD_KEYS_MAX`): every request then finds its
    // connection in the table, as it would without this shortcut.
    private static let slot: pthread_key_t? = {
        var slot = pthread_key_t()
        return pthread_key_create(&slot, nil) == 0 ? slot : nil
    }()

    /// Runs `body` (the rest of the pipeline's read) with `observer` as the current thread's reading observer.
    static func delivering(_ observer: ClientDisconnectObserver, _ body: () -> Void) {
        guard let slot else { return body() }
        let outer = pthread_getspecific(slot)
        pthread_setspecific(slot, Unmanaged.passUnretained(observer).toOpaque())
        defer { pthread_setspecific(slot, outer) }
        body()
    }

    /// The observer whose read the current thread is in, if any. It is alive: its `channelRead` is on the stack.
    static var current: ClientDisconnectObserver? {
        guard let slot, let observer = pthread_getspecific(slot) else { return nil }
        return Unmanaged<ClientDisconnectObserver>.fromOpaque(observer).takeUnretainedValue()
    }
}
