// `make demo-server`: a loopback HTTP server (SwiftNIO) and an AsyncHTTPClient client under swift-service-lifecycle.
// Each request gets a linked token: its own deadline (a timer) combined with the service's graceful-shutdown token.
// Slow requests are cancelled in flight by their deadline; a graceful shutdown midway cancels what is left. Both
// sides print what happened when, and the server confirms each cancelled request's connection closed early.
// Loopback only, a fixed set of requests, and a watchdog: it ends by itself within seconds.
import AsyncHTTPClient
import FutureLib
import FutureLibAsyncHTTPClient
import FutureLibServiceLifecycle
import IntegrationsTestSupport
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let start = ContinuousClock.now

/// Seconds since the demo started, as `  1.234s`.
func stamp() -> String {
    let elapsed = ContinuousClock.now - start
    let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    let text = "\(milliseconds / 1000).\(String(1000 + milliseconds % 1000).dropFirst())s"
    return String(repeating: " ", count: max(0, 7 - text.count)) + text
}

/// One request of the demo: a path and its own deadline.
struct Planned: Sendable {
    let path: String
    let deadline: Duration
}

let plan = [
    Planned(path: "/fast", deadline: .seconds(1)),
    Planned(path: "/slow-head?ms=200", deadline: .seconds(1)),
    Planned(path: "/slow-head?ms=5000", deadline: .milliseconds(500)),  // deadline, waiting for the head
    Planned(path: "/slow-body?chunks=40&ms=50", deadline: .milliseconds(700)),  // deadline, while the body streams
    Planned(path: "/slow-body?chunks=5&ms=50", deadline: .seconds(1)),
    Planned(path: "/slow-head?ms=30000", deadline: .seconds(10)),  // shutdown, waiting for the head
    Planned(path: "/slow-body?chunks=600&ms=50", deadline: .seconds(10)),  // shutdown, while the body streams
]
let shutdownAfter = Duration.milliseconds(1500)

/// What happened to the client's requests.
final class Tally: Sendable {
    let completed = Atomic(0)
    let byDeadline = Atomic(0)
    let byShutdown = Atomic(0)
}

/// The client side, as a service: sends the plan, each request with a linked token, and waits for all of them.
struct ClientService: Service {
    let client: HTTPClient
    let server: LoopbackHTTPServer
    let tally: Tally

    func run() async throws {
        await withGracefulShutdownToken { shutdown in
            shutdown.onCancel { print("[client \(stamp())] graceful shutdown: cancelling what is left") }
            let outcomes = plan.enumerated().map { number, planned in
                let deadline = CancellationRequest(cancelAfter: planned.deadline)
                let linked = CancellationRequest(linkedTo: [deadline.token, shutdown])
                print("[client \(stamp())] #\(number + 1) GET \(planned.path), deadline \(planned.deadline)")
                return client.execute(
                    HTTPClientRequest(url: server.url(planned.path)),
                    timeout: .seconds(60),
                    upTo: 1 << 20,
                    cancellationToken: linked.token
                ).transform { result in
                    // Printed when it happens, on the thread that completed or cancelled the request.
                    switch result {
                    case .success(let response):
                        tally.completed.add(1, ordering: .relaxed)
                        print("[client \(stamp())] #\(number + 1) \(planned.path): \(response.status.code), complete")
                    case .failure(let error as CancellationError):
                        _ = error
                        let byDeadline = deadline.isCancellationRequested
                        if byDeadline {
                            tally.byDeadline.add(1, ordering: .relaxed)
                        } else {
                            tally.byShutdown.add(1, ordering: .relaxed)
                        }
                        let why = byDeadline ? "its deadline" : "graceful shutdown"
                        print("[client \(stamp())] #\(number + 1) \(planned.path): cancelled in flight by \(why)")
                    case .failure(let error):
                        print("[client \(stamp())] #\(number + 1) \(planned.path): failed, \(error)")
                    }
                    return .success(())
                }
            }
            for outcome in outcomes { try? await outcome.value() }
        }
    }
}

// A watchdog: the demo must end by itself.
let watchdog = CancellationRequest(cancelAfter: .seconds(60))
watchdog.token.onCancel {
    print("demo-server: did not finish within 60 s")
    exit(1)
}

/// Runs the server, the client service and the shutdown; returns whether the server saw every cancelled request's
/// connection close early.
func runDemo() async throws -> Bool {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let server = try await LoopbackHTTPServer.start(on: group) { event in
        switch event {
        case .request(let connection, let uri):
            print("[server \(stamp())] connection \(connection): GET \(uri)")
        case .closedEarly(let connection, let uri):
            print("[server \(stamp())] connection \(connection) closed early by the client, during \(uri)")
        }
    }
    let client = HTTPClient(eventLoopGroup: group)
    let tally = Tally()
    var logger = Logger(label: "demo-server")
    logger.logLevel = .warning
    let services = ServiceGroup(
        configuration: .init(services: [ClientService(client: client, server: server, tally: tally)], logger: logger)
    )

    print("demo-server: loopback server on 127.0.0.1:\(server.port); graceful shutdown at \(shutdownAfter)")
    try await withThrowingTaskGroup { tasks in
        tasks.addTask { try await services.run() }
        try await Task.sleep(for: shutdownAfter)
        print("[main   \(stamp())] triggering graceful shutdown")
        await services.triggerGracefulShutdown()
        try await tasks.waitForAll()
    }

    let cancelled = tally.byDeadline.load(ordering: .relaxed) + tally.byShutdown.load(ordering: .relaxed)
    let closedEarly = await server.waitUntil(limit: .seconds(10)) { $0.closedEarly >= cancelled }
    try await client.shutdown()
    try await server.shutdown()
    try await group.shutdownGracefully()
    let statistics = server.current
    print(
        """
        demo-server: client: \(tally.completed.load(ordering: .relaxed)) completed, \
        \(tally.byDeadline.load(ordering: .relaxed)) cancelled by their deadline, \
        \(tally.byShutdown.load(ordering: .relaxed)) by graceful shutdown
        demo-server: server: \(statistics.requests) requests, \(statistics.responsesCompleted) answered, \
        \(statistics.closedEarly) connections closed early by the client
        """
    )
    return closedEarly && statistics.closedEarly == cancelled
}

let everyCancelledConnectionClosed = try await runDemo()
watchdog.cancel(after: .seconds(3600))
guard everyCancelledConnectionClosed else {
    print("demo-server: the server did not see every cancelled request's connection close")
    exit(1)
}
