public import Cancellation
import ServiceLifecycle

/// Runs `body` with a token that is cancelled when the service group shuts down gracefully.
///
/// Code that knows only tokens (a FutureLib chain, a library that takes a `CancellationToken`) then stops
/// cleanly when the service stops: hand it the token.
///
/// ```swift
/// struct Poller: Service {
///     func run() async throws {
///         try await withGracefulShutdownToken { shutdown in
///             while !shutdown.isCancellationRequested {
///                 try await fetchUpdates(cancellationToken: shutdown).value()
///             }
///         }
///     }
/// }
/// ```
///
/// ### Semantics
/// - The token is cancelled exactly once, with the reason ``GracefulShutdownError`` (its `cancellationReason`),
///   when the `ServiceGroup` running the current task triggers graceful shutdown, on the thread that triggers it (swift-service-lifecycle calls its graceful-shutdown handlers
///   there). If graceful shutdown has already begun, it is cancelled before `body` starts.
/// - The token is *not* cancelled by task cancellation (use ``withTaskCancellationOrGracefulShutdownToken(_:)``
///   for both), nor outside a `ServiceGroup`, where there is no graceful shutdown: there it is never cancelled.
/// - After `body` returns, the graceful-shutdown handler is removed and the token's request released: handlers
///   still stored on the token are released without running.
///
/// - Parameter body: The work, given the token.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
public func withGracefulShutdownToken<T>(
    _ body: (CancellationToken) async throws -> T
) async rethrows -> T {
    let request = CancellationRequest()
    return try await withGracefulShutdownHandler {
        try await body(request.token)
    } onGracefulShutdown: {
        request.cancel(reason: GracefulShutdownError())
    }
}

/// Runs `body` with a token that is cancelled when the current task is cancelled or the service group shuts
/// down gracefully, whichever comes first.
///
/// A `ServiceGroup` cancels its services' tasks when a service fails or graceful shutdown times out; this token
/// follows both ways of stopping.
///
/// ```swift
/// struct Mirror: Service {
///     let client: HTTPClient
///     func run() async throws {
///         try await withTaskCancellationOrGracefulShutdownToken { stop in
///             let page = client.execute(request, timeout: .seconds(30), upTo: 1 << 20, cancellationToken: stop)
///             try await store(page.value())
///         }
///     }
/// }
/// ```
///
/// ### Semantics
/// - The token is cancelled exactly once, by whichever comes first: task cancellation (on the thread that
///   cancels the task; reason `CancellationError`) or graceful shutdown (on the thread that triggers it; reason
///   ``GracefulShutdownError``). If either has already happened, it is cancelled before `body` starts.
/// - After `body` returns, both handlers are removed and the token's request released.
///
/// - Parameter body: The work, given the token.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
public func withTaskCancellationOrGracefulShutdownToken<T>(
    _ body: (CancellationToken) async throws -> T
) async rethrows -> T {
    let request = CancellationRequest()
    // swift-service-lifecycle's `withTaskCancellationOrGracefulShutdownHandler` is these two handlers nested, with
    // one closure for both; two closures tell the token which one fired.
    return try await withTaskCancellationHandler {
        try await withGracefulShutdownHandler {
            try await body(request.token)
        } onGracefulShutdown: {
            request.cancel(reason: GracefulShutdownError())
        }
    } onCancel: {
        request.cancel(reason: CancellationError())
    }
}
