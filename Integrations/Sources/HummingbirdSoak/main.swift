// `make integrations-soak`: a Hummingbird application with `RequestCancellationMiddleware` and
// `.http1ObservingClientDisconnects()` on loopback, under keep-alive clients, for a long time (release).
//
//     HummingbirdSoak [requests] [--rounds N] [--trim] [--fast-only]     (default 1,000,000 requests in 10 rounds)
//
// Eight AsyncHTTPClient clients, one keep-alive connection each, share the requests, round after round. Every request
// has a deadline (5 minutes: longer than the soak waits for a round to settle, so that a request left alive still shows
// as its timer) and a link to the application's shutdown token, as the server guide's application has. Of every 50
// requests: 45 are answered at once (a lookup linked to the request's token, with a deadline of its own); 3 call a
// loopback upstream under the request's token and are answered with its body; 1 calls an upstream whose answer takes
// 10 s under a 1 ms route deadline (504, the upstream call cancelled); 1 is made on a raw socket that the client closes
// once its handler runs, while the handler waits for the upstream (the upstream call cancelled,
// `ClientDisconnectedError`). The upstream calls of one block of 50 go through the AsyncHTTPClient adapter's `Future`
// form (`execute(_:timeout:upTo:cancellationToken:)`), those of the next through its `async` form (the closure that
// reads the streamed body), and so on: both of the adapter's delegate paths, cancellations included.
//
// After each round (the first is the warm-up) it waits until nothing is in flight and prints the resident set, the heap
// in use as glibc counts it (`mallinfo2`), and what the requests left behind: handlers running, a sample of their
// `CancellationRequest`s still alive, handlers on the shutdown token, the system clock's pending timers, open
// connections. `--trim` calls `malloc_trim(0)` before each reading; `--fast-only` sends only requests answered at once.
// It exits with a failure if the resident set grew by more than `memoryBound` after the warm-up, if a request was
// answered wrongly or a cancellation counted wrong, or if anything is left behind after a round or at the end.
import AsyncHTTPClient
import Foundation
import FutureLibAsyncHTTPClient
import FutureLibHummingbird
import Hummingbird
import IntegrationsTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How much the resident set may grow after the warm-up round.
let memoryBound = 2 << 20
let arguments = Array(CommandLine.arguments.dropFirst())
let rounds = max(2, arguments.firstIndex(of: "--rounds").flatMap { Int(arguments[($0 + 1) % arguments.count]) } ?? 10)
let trimsEachRound = arguments.contains("--trim")
/// Only requests answered at once: no upstream, no deadline, no client leaving (to tell their memory from the rest's).
let fastOnly = arguments.contains("--fast-only")
let clients = 8
let perClient = max(1, (arguments.first.flatMap { Int($0) } ?? 1_000_000) / (rounds * clients))
let perRound = perClient * clients

/// What request `number` does.
enum Kind {
    case fast, proxied, deadline, gone

    init(_ number: Int) {
        switch fastOnly ? 1 : number % 50 {
        case 0: self = .deadline
        case 25: self = .gone
        case 10, 20, 30: self = .proxied
        default: self = .fast
        }
    }
}

/// Counters, written from any thread.
let wrong = NIOLockedValueBox(0)
let deadlines = NIOLockedValueBox(0)
let disconnects = NIOLockedValueBox(0)

let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
let upstream = try await LoopbackHTTPServer.start(on: group)
var upstreamConfiguration = HTTPClient.Configuration()
upstreamConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
let upstreamClient = HTTPClient(eventLoopGroup: group, configuration: upstreamConfiguration)

let shutdown = CancellationRequest()
let census = RequestCensus(sampleEvery: 16)
let arrivals = Arrivals()
let router = Router(context: BasicCancellableRequestContext.self)
router.add(
    middleware: RequestCancellationMiddleware(
        deadline: .seconds(300),
        shutdown: shutdown.token,
        respondsToCancellation: true
    )
)
router.add(middleware: CensusMiddleware(census: census))
router.get("fast") { _, context in
    // The server guide's inventory lookup: a request linked to the request's token, with a deadline of its own.
    let lookup = CancellationRequest(linkedTo: context.cancellation.token, timeout: .milliseconds(500))
    try lookup.token.checkCancellation()
    return "ok"
}
let proxy: @Sendable (Request, BasicCancellableRequestContext) async throws -> String = { request, context in
    let ms = request.uri.queryParameters["ms"].map(String.init) ?? "0"
    if let number = request.uri.queryParameters["gone"].flatMap({ Int(String($0)) }) { arrivals.arrive(number) }
    do {
        if request.uri.queryParameters["form"] == "async" {
            return try await upstream.slowHeadStreamed(
                ms: ms,
                through: upstreamClient,
                cancellationToken: context.cancellation.token
            )
        }
        return try await upstream.slowHead(
            ms: ms,
            through: upstreamClient,
            cancellationToken: context.cancellation.token
        )
    } catch {
        switch context.cancellation.token.cancellationReason {
        case is DeadlineExceededError: deadlines.withLockedValue { $0 += 1 }
        case is ClientDisconnectedError: disconnects.withLockedValue { $0 += 1 }
        default: wrong.withLockedValue { $0 += 1 }
        }
        throw error
    }
}
router.get("proxy", use: proxy)
router.group("deadline").add(middleware: RequestDeadlineMiddleware(.milliseconds(1))).get("proxy", use: proxy)

/// The query parameter that sends request `number`'s upstream call through the adapter's `async` form: every other
/// block of 50 requests.
func form(_ number: Int) -> String {
    (number / 50) % 2 == 1 ? "&form=async" : ""
}

/// Request `number` on a raw socket, closed by the client once its handler runs (and waits for the upstream).
func disconnectingRequest(_ number: Int, port: Int) async throws {
    let channel = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port).get()
    let text = "GET /proxy?ms=60000&gone=\(number)\(form(number)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    try await channel.writeAndFlush(ByteBuffer(string: text)).get()
    await arrivals.wait(for: number)
    try await channel.close()
}

/// Requests `numbers` through `client`'s keep-alive connection.
func drive(_ client: HTTPClient, port: Int, numbers: Range<Int>) async throws {
    for number in numbers {
        let kind = Kind(number)
        let path: String
        switch kind {
        case .gone:
            try await disconnectingRequest(number, port: port)
            continue
        case .fast: path = "/fast"
        case .proxied: path = "/proxy?ms=0\(form(number))"
        case .deadline: path = "/deadline/proxy?ms=10000\(form(number))"
        }
        let response = try await client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"),
            timeout: .seconds(60)
        )
        let body = String(buffer: try await response.body.collect(upTo: 1024))
        let answered = kind == .deadline ? response.status == .gatewayTimeout : response.status == .ok && body == "ok"
        if !answered { wrong.withLockedValue { $0 += 1 } }
    }
}

/// Waits until nothing is left but `open` connections, or `limit` passes; returns the last count.
func settle(open: Int, limit: Duration = .seconds(30)) async -> LiveCounts {
    let end = ContinuousClock.now + limit
    var counts = LiveCounts.now(census: census, shutdown: shutdown.token)
    while !counts.isClear(connections: open), ContinuousClock.now < end {
        try? await Task.sleep(for: .milliseconds(10))
        counts = LiveCounts.now(census: census, shutdown: shutdown.token)
    }
    return counts
}

func grouped(_ number: Int) -> String {
    let digits = String(abs(number))
    let groups = stride(from: digits.count, to: 0, by: -3).reversed().map { end in
        String(digits.dropFirst(max(0, end - 3)).prefix(end - max(0, end - 3)))
    }
    return (number < 0 ? "-" : "") + groups.joined(separator: ",")
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

/// `12.3 s`.
func formatted(_ duration: Duration) -> String {
    let tenths = Int((seconds(duration) * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) s"
}

print(
    "HummingbirdSoak: \(grouped(perRound * rounds)) requests in \(rounds) rounds of \(grouped(perRound)),",
    "\(clients) keep-alive clients\(trimsEachRound ? ", malloc_trim(0) before each reading" : "")"
        + (fastOnly ? " (only requests answered at once)" : "")
)
let failures = try await withRunningApplication(
    router: router,
    server: .http1ObservingClientDisconnects(),
    group: group
) { port, _ -> [String] in
    var failures: [String] = []
    var readings: [MemoryReading] = []
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1
    let httpClients = (0..<clients).map { _ in HTTPClient(eventLoopGroup: group, configuration: configuration) }
    let started = ContinuousClock.now
    for round in 0..<rounds {
        census.forgetSample()
        let roundStarted = ContinuousClock.now
        let watchdog = Task {
            try await Task.sleep(for: .seconds(900))
            print("HummingbirdSoak: FAILED: round \(round + 1) still running after 15 minutes")
            exit(2)
        }
        try await withThrowingTaskGroup { load in
            for (index, client) in httpClients.enumerated() {
                let first = (round * clients + index) * perClient
                load.addTask { try await drive(client, port: port, numbers: first..<(first + perClient)) }
            }
            try await load.waitForAll()
        }
        watchdog.cancel()
        let elapsed = ContinuousClock.now - roundStarted
        let left = await settle(open: clients)
        let sampled = census.sampledAlive.sampled
        let reading = trimsEachRound ? MemoryReading.afterTrim() : MemoryReading.now()
        readings.append(reading)
        let growth = round == 0 ? "warm-up" : megabytes(reading.resident - readings[0].resident, signed: true)
        let heapGrowth = round == 0 ? "warm-up" : kilobytes(reading.heapInUse - readings[0].heapInUse, signed: true)
        print(
            "round \(round + 1)/\(rounds): \(grouped(perRound)) requests in \(formatted(elapsed))",
            "(\(grouped(Int(Double(perRound) / max(seconds(elapsed), 1e-9))))/s);",
            "resident \(megabytes(reading.resident)) (\(growth)), heap in use \(kilobytes(reading.heapInUse))",
            "(\(heapGrowth)), free in heap \(kilobytes(reading.heapFree));",
            "left: \(left) (of \(grouped(sampled)) requests sampled);",
            "upstream connections open \(upstream.current.accepted - upstream.current.closed)"
        )
        if !left.isClear(connections: clients) { failures.append("round \(round + 1) left behind: \(left)") }
        fflush(nil)  // each round's line shows as it ends, in a log file too
    }
    for client in httpClients { try await client.shutdown() }
    let end = await settle(open: 0)
    let total = perRound * rounds
    let expectedDeadlines = (0..<total).count { Kind($0) == .deadline }
    let expectedGone = (0..<total).count { Kind($0) == .gone }
    let before = MemoryReading.now()
    let trimmed = MemoryReading.afterTrim()
    let peak = readings.dropFirst().map(\.resident).max() ?? readings[0].resident
    print(
        "HummingbirdSoak: \(grouped(total)) requests in \(formatted(ContinuousClock.now - started)):",
        "\(grouped(deadlines.withLockedValue { $0 })) cut by their deadline (504, \(grouped(expectedDeadlines)) sent),",
        "\(grouped(disconnects.withLockedValue { $0 })) by a client gone (\(grouped(expectedGone)) sent);",
        "resident set \(megabytes(readings[0].resident)) after warm-up, at most \(megabytes(peak)) after it",
        "(\(megabytes(peak - readings[0].resident, signed: true)), bound \(megabytes(memoryBound)));",
        "at the end \(megabytes(before.resident)), \(megabytes(trimmed.resident)) after malloc_trim(0)",
        "(heap in use \(kilobytes(before.heapInUse)) -> \(kilobytes(trimmed.heapInUse)));",
        "left at the end: \(end)"
    )
    if peak - readings[0].resident > memoryBound {
        failures.append("the resident set grew by \(megabytes(peak - readings[0].resident)) after the warm-up")
    }
    let wrongCount = wrong.withLockedValue { $0 }
    if wrongCount > 0 { failures.append("\(wrongCount) requests answered or cancelled wrongly") }
    if deadlines.withLockedValue({ $0 }) != expectedDeadlines || disconnects.withLockedValue({ $0 }) != expectedGone {
        failures.append("the cancellations counted differ from the requests sent")
    }
    if !end.isClear(connections: 0) { failures.append("left behind at the end: \(end)") }
    return failures
}
try await upstreamClient.shutdown().get()
try await upstream.shutdown()
try await group.shutdownGracefully()
for failure in failures { print("HummingbirdSoak: FAILED: \(failure)") }
exit(failures.isEmpty ? 0 : 1)
