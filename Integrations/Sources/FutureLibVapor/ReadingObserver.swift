import FutureLibVaporReadingSlot

/// The ``ClientDisconnectObserver`` whose read the current thread is passing down its connection's pipeline.
///
/// Vapor answers most requests inside the read that completes them: its decoder, its responder and
/// ``RequestCancellationMiddleware`` all run within the observer's `channelRead`, on the connection's event loop.
/// The middleware then finds the request's connection here, without the lock and the hash of the table of all
/// connections (`make bench-http-instructions` counts the difference); it checks the connection's address against
/// the request's, so a request of another connection, delivered within this read, gets its own.
enum ReadingObserver {
    /// Runs `body` (the rest of the pipeline's read) with `observer` as the current thread's reading observer.
    ///
    /// The slot is a C thread-local (`FutureLibVaporReadingSlot`), not a task-local (the read and the middleware
    /// run on an event loop's thread, outside any task) nor a pthread key (a call per access, three a request).
    static func delivering(_ observer: ClientDisconnectObserver, _ body: () -> Void) {
        let outer = futurelib_vapor_reading_observer_get()
        futurelib_vapor_reading_observer_set(Unmanaged.passUnretained(observer).toOpaque())
        defer { futurelib_vapor_reading_observer_set(outer) }
        body()
    }

    /// The observer whose read the current thread is in, if any. It is alive: its `channelRead` is on the stack.
    static var current: ClientDisconnectObserver? {
        guard let observer = futurelib_vapor_reading_observer_get() else { return nil }
        return Unmanaged<ClientDisconnectObserver>.fromOpaque(observer).takeUnretainedValue()
    }
}
