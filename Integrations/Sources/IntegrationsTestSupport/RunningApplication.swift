public import Hummingbird
public import HummingbirdCore
import Logging
import NIOCore
public import NIOPosix
import ServiceLifecycle

/// Runs `router` as a Hummingbird application on 127.0.0.1 (a port the OS picks), in a `ServiceGroup` as
/// `runService()` would, calls `body` with the port and a way to trigger graceful shutdown, then shuts it down
/// gracefully and waits for it to stop.
///
/// - Parameters:
///   - router: The application's routes.
///   - server: The HTTP server (`.http1()`, `.http1ObservingClientDisconnects()`).
///   - group: The loops the server runs on.
///   - body: The test, given the port and the graceful-shutdown trigger.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
public func withRunningApplication<Responder: HTTPResponderBuilder, T: Sendable>(
    router: Responder,
    server: HTTPServerBuilder,
    group: MultiThreadedEventLoopGroup,
    _ body: (_ port: Int, _ shutDown: @escaping @Sendable () async -> Void) async throws -> T
) async throws -> T where Responder.Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let app = Application(
        router: router,
        server: server,
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
            portContinuation.finish()
        },
        eventLoopGroupProvider: .shared(group),
        logger: Logger(label: "application") { _ in SwiftLogNoOpLogHandler() }
    )
    let serviceGroup = ServiceGroup(
        configuration: .init(services: [app], logger: Logger(label: "service-group") { _ in SwiftLogNoOpLogHandler() })
    )
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await serviceGroup.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await tasks.waitForAll()
            throw ApplicationDidNotStart()
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(port) { await serviceGroup.triggerGracefulShutdown() })
        } catch {
            result = .failure(error)
        }
        await serviceGroup.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return try result.get()
    }
}

/// The application stopped before it listened.
public struct ApplicationDidNotStart: Error {}
