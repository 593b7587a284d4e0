import AsyncHTTPClient
import FutureLib
import FutureLibAsyncHTTPClient
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The client: the three scenarios, one after the other, against the edge.
func runClient(_ timeline: Timeline, edgePort: Int, edgePID: Int32, leafLog: String) async throws {
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    defer { _ = client.shutdown() }

    /// Sends `GET /work/<label><query>` with `token`; logs and returns the outcome.
    @Sendable func send(_ label: String, _ query: String = "", token: CancellationToken = .none) -> Future<String> {
        client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(edgePort)/work/\(label)\(query)"),
            timeout: .seconds(30),
            upTo: 1 << 16,
            cancellationToken: token
        ).transform { result in
            let outcome: String
            switch result {
            case .success(let response): outcome = "answer: \(response.status.code)"
            case .failure(let error as CancellationError): outcome = "gave up (\(error))"
            case .failure(let error): outcome = "failed: \(error)"
            }
            timeline.event(label, outcome)
            return .success(outcome)
        }
    }

    // Every connection of every hop made once, so that no scenario times a connection's setup.
    _ = try await send("ping").value()

    // (a) The client gives up.
    let giveUp = CancellationRequest()
    let a = send("a", token: giveUp.token)
    try await Task.sleep(for: .milliseconds(300))
    try await waitUntilStarted(["a"], leafLog: leafLog)
    timeline.mark("a", "the client gives up (closes its connection to the edge)")
    giveUp.cancel()
    _ = try await a.value()
    try await Task.sleep(for: .milliseconds(300))

    // (b) A 300 ms deadline set at the edge; the leaf's own work takes 2 s.
    timeline.mark("b", "the client sends a request whose route sets a 300 ms deadline")
    _ = try await send("b", "?deadline_ms=300").value()
    try await Task.sleep(for: .milliseconds(300))

    // (c) The edge shuts down gracefully with two requests in flight.
    let inFlight = [send("c1"), send("c2")]
    try await Task.sleep(for: .milliseconds(300))
    try await waitUntilStarted(["c1", "c2"], leafLog: leafLog)
    timeline.mark("c", "SIGTERM to the edge (pid \(edgePID)): graceful shutdown with 2 requests in flight")
    kill(edgePID, SIGTERM)
    for request in inFlight { _ = try await request.value() }
    try await client.shutdown()
}

/// Waits (up to 20 s) until the leaf's log says that the RPCs of `labels` started, so that a loaded machine cannot
/// make a scenario start before its requests reached the leaf.
func waitUntilStarted(_ labels: [String], leafLog: String) async throws {
    for _ in 0..<2_000 {
        let log = contents(of: leafLog)
        if labels.allSatisfy({ log.contains("\t\($0)\tevent\tRPC started") }) { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw LeafDidNotStart(labels: labels)
}

/// The leaf's log never said that these RPCs started.
struct LeafDidNotStart: Error {
    let labels: [String]
}

/// The text of the file at `path`, empty if it cannot be read.
func contents(of path: String) -> String {
    guard let file = fopen(path, "r") else { return "" }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
