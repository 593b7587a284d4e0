// `make demo`: FutureLib doing its main job on real HTTP. The demo starts its own HTTP/1.1 server
// on 127.0.0.1, sends requests through URLSession (FutureLibFoundation's adapter), and cancels
// them in flight with timers and shared tokens, printing what happened when, on both sides.
import Foundation
import FutureLib
import FutureLibFoundation
import HTTPFixture
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let start = ContinuousClock.now

/// Prints `line` after the milliseconds elapsed since the demo started.
func log(_ line: String) {
    let elapsed = (ContinuousClock.now - start).components
    let milliseconds = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
    let stamp = String(milliseconds)
    print("[\(String(repeating: " ", count: max(0, 5 - stamp.count)))\(stamp) ms] \(line)")
}

/// Counts the outcomes for the summary, from any thread.
final class Tally: Sendable {
    private let counts = Atomic<Int>(0)
    private let finishedCount = Atomic<Int>(0)
    private let cancelledCount = Atomic<Int>(0)

    var sent: Int { counts.load(ordering: .relaxed) }
    var finished: Int { finishedCount.load(ordering: .relaxed) }
    var cancelled: Int { cancelledCount.load(ordering: .relaxed) }

    func record(_ result: Result<(Data, URLResponse), any Error>) {
        switch result {
        case .success: finishedCount.add(1, ordering: .relaxed)
        case .failure(is CancellationError): cancelledCount.add(1, ordering: .relaxed)
        case .failure: break
        }
    }

    func countSent() { counts.add(1, ordering: .relaxed) }
}

let tally = Tally()

/// Sends GET `path` through the adapter and logs its outcome when it completes.
func fetch(
    _ name: String,
    _ path: String,
    on server: HTTPFixture,
    session: URLSession,
    cancellationToken: CancellationToken
) -> Future<(Data, URLResponse)> {
    let separator = path.contains("?") ? "&" : "?"
    tally.countSent()
    log("   → \(name): GET \(path)")
    let future = session.data(from: server.url(path + separator + "id=\(name)"), cancellationToken: cancellationToken)
    future.onComplete(on: .synchronous) { result in
        tally.record(result)
        switch result {
        case .success(let (data, response)):
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            log("   ✓ \(name): \(status), \(data.count) bytes")
        case .failure(is CancellationError):
            log("   ✗ \(name): cancelled in flight")
        case .failure(let error):
            log("   ! \(name): failed: \(error)")
        }
    }
    return future
}

/// Waits for `future` without blocking a thread, ignoring how it ended (each logs its own).
func settle<T>(_ future: Future<T>) async {
    _ = try? await future.value()
}

func run() async throws {
    let server = try HTTPFixture { request in
        let when = request.chunksSent == 0 ? "before the reply" : "after \(request.chunksSent) chunk(s)"
        log("   ⇠ server: \(request.id ?? request.target): connection closed by the client \(when)")
    }
    let configuration = URLSessionConfiguration.ephemeral
    configuration.connectionProxyDictionary = [:]  // loopback only
    configuration.httpMaximumConnectionsPerHost = 16
    let session = URLSession(configuration: configuration)
    log("HTTP server listening on 127.0.0.1:\(server.port) (loopback only)")

    log("1. A 400 ms timer (CancellationRequest(cancelAfter:)) shared by four requests.")
    let deadline = CancellationRequest(cancelAfter: .milliseconds(400))
    let first = [
        fetch("quick", "/now?size=1024", on: server, session: session, cancellationToken: deadline.token),
        fetch("slow-ok", "/slow?delay=150", on: server, session: session, cancellationToken: deadline.token),
        fetch("too-slow", "/slow?delay=5000", on: server, session: session, cancellationToken: deadline.token),
        fetch(
            "stream",
            "/stream?chunks=100&interval=50",
            on: server,
            session: session,
            cancellationToken: deadline.token
        ),
    ]
    // Registered last, so it runs first: a token's handlers run newest first.
    deadline.token.onCancel { log("   ⏰ timer fired: token cancelled") }
    await settle(first.results())

    log("2. One shared token cancels a batch of four streaming downloads together.")
    let batch = CancellationRequest()
    let parts = (1...4).map {
        fetch(
            "part-\($0)",
            "/stream?chunks=200&interval=25",
            on: server,
            session: session,
            cancellationToken: batch.token
        )
    }
    Future(value: (), after: .milliseconds(300)).onSuccess { _ in
        log("   user pressed cancel: batch.cancel()")
        batch.cancel()
    }
    if let results = try? await parts.results().value() {
        let cancelled = results.filter { if case .failure(is CancellationError) = $0 { true } else { false } }
        log("   batch: \(cancelled.count) of \(results.count) cancelled together")
    }

    log("3. traverse downloads 12 files (200 ms each), 3 at a time, with a 700 ms deadline.")
    let budget = CancellationRequest(cancelAfter: .milliseconds(700))
    let files = (1...12).traverse(cancellationToken: budget.token, maxConcurrency: 3) { index in
        fetch(
            "file-\(index)",
            "/slow?delay=200&size=4096",
            on: server,
            session: session,
            cancellationToken: budget.token
        )
    }
    do {
        let downloaded = try await files.value()
        log("   traverse: all \(downloaded.count) files downloaded")
    } catch {
        log("   traverse: \(error is CancellationError ? "cancelled by the deadline" : "failed: \(error)")")
    }

    // The server sees each close a moment after the client cancels: wait for all of them.
    let cancelledNames = server.requests.filter { $0.outcome != .completed }.compactMap(\.id)
    for name in cancelledNames {
        _ = await server.eventually(id: name, timeout: .seconds(10)) { $0.outcome != .inProgress }
    }
    session.invalidateAndCancel()
    server.stop()

    let closedEarly = server.requests.filter { $0.outcome == .clientClosedEarly }.count
    log("Summary: \(tally.sent) requests sent, \(tally.finished) finished, \(tally.cancelled) cancelled in flight.")
    log("         The server saw \(closedEarly) connection(s) closed before the reply was complete.")
    if closedEarly < tally.cancelled {
        log("         (A request cancelled before the server read it leaves no reply to cut short.)")
    }
}

do {
    try await run()
} catch {
    print("demo failed: \(error)")
    exit(1)
}
