import Cancellation
import FutureLibGRPC
import GRPCCore
import GRPCMallocCounter
import GRPCNIOTransportHTTP2
import GRPCWorkService

#if canImport(Glibc)
import Glibc
#endif

typealias Client = GRPCClient<HTTP2ClientTransport.Posix>

/// Runs a server of `service` with `interceptors` on a loopback port, and a client of it with `clientInterceptors`,
/// while `body` runs.
func withLoopbackPair<T: Sendable>(
    _ service: WorkService,
    interceptors: [any ServerInterceptor],
    clientInterceptors: [any ClientInterceptor],
    _ body: (Client) async throws -> T
) async throws -> T {
    let transport = HTTP2ServerTransport.Posix(
        address: .ipv4(host: "127.0.0.1", port: 0),
        transportSecurity: .plaintext
    )
    let server = GRPCServer(transport: transport, services: [service], interceptors: interceptors)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            try await server.serve()
            return nil
        }
        let port = try await transport.listeningAddress.ipv4!.port
        let result = try await withGRPCClient(
            transport: try .http2NIOPosix(
                target: .ipv4(address: "127.0.0.1", port: port),
                transportSecurity: .plaintext
            ),
            interceptors: clientInterceptors,
            handleClient: body
        )
        server.beginGracefulShutdown()
        try await group.waitForAll()
        return result
    }
}

/// One call of each kind, with the same 1 h deadline (so both send `grpc-timeout`).
enum CallKind {
    /// GRPCCore's own call, `options.timeout` 1 h; a server and a client with no interceptor.
    case plain
    /// The `cancellationToken:` call with a token whose timer fires in 1 h, through `ClientCancellationInterceptor`,
    /// to a server with `ServerCancellationInterceptor` whose handler reads its token.
    case futureLib(CancellationToken)

    func call(_ client: Client) async throws -> String {
        switch self {
        case .plain:
            var options = CallOptions.defaults
            options.timeout = .seconds(3600)
            return try await client.unary(
                request: ClientRequest(message: "x"),
                descriptor: workMethod,
                serializer: UTF8Serializer(),
                deserializer: UTF8Deserializer(),
                options: options
            ) { try $0.message }
        case .futureLib(let token):
            return try await client.unary(
                request: ClientRequest(message: "x"),
                descriptor: workMethod,
                serializer: UTF8Serializer(),
                deserializer: UTF8Deserializer(),
                cancellationToken: token
            ) { try $0.message }
        }
    }
}

/// Time per call (sequential calls, round by round, alternating) and allocations per call (the whole process: both
/// sides), plain against FutureLib.
func measureCallOverhead(rounds: Int, callsPerRound: Int, countedCalls counted: Int) async throws {
    let plainService = WorkService { $0 }
    let tokenService = WorkService { message in
        // What a handler that propagates does: read its token.
        RPCCancellation.token.isCancellationRequested ? "" : message
    }
    try await withLoopbackPair(plainService, interceptors: [], clientInterceptors: []) { plainClient in
        try await withLoopbackPair(
            tokenService,
            interceptors: [ServerCancellationInterceptor()],
            clientInterceptors: [ClientCancellationInterceptor()]
        ) { tokenClient in
            try await withLoopbackPair(
                tokenService,
                interceptors: [ServerCancellationInterceptor(cancelsHandlerTask: true)],
                clientInterceptors: [ClientCancellationInterceptor()]
            ) { taskCancellingClient in
                let shared = CancellationRequest(cancelAfter: .seconds(3600))
                defer { shared.cancel() }
                // What is measured, each a unary call with a 1 h deadline (all send grpc-timeout).
                let kinds: [(name: String, call: @Sendable () async throws -> String)] = [
                    ("plain grpc-swift-2", { try await CallKind.plain.call(plainClient) }),
                    ("server interceptor only", { try await CallKind.plain.call(tokenClient) }),
                    ("token + propagation", { try await CallKind.futureLib(shared.token).call(tokenClient) }),
                    (
                        "token + propagation, a new token per call",
                        {
                            let request = CancellationRequest(cancelAfter: .seconds(3600))
                            defer { request.cancel() }
                            return try await CallKind.futureLib(request.token).call(tokenClient)
                        }
                    ),
                    (
                        "the same, handler's task cancelled",
                        { try await CallKind.futureLib(shared.token).call(taskCancellingClient) }
                    ),
                ]
                // GRPC_BENCH_ONLY=<kind> (0 to 4): only that kind's calls, `counted` of them after a short warm-up, with
                // GRPC_MALLOC_TRACE=<file> the call stack of each allocation (Scripts/malloc-trace-report.py).
                if let only = getenv("GRPC_BENCH_ONLY").flatMap({ Int(String(cString: $0)) }),
                    kinds.indices.contains(only)
                {
                    for _ in 0..<50 { _ = try await kinds[only].call() }
                    malloc_counter_start()
                    for _ in 0..<counted { _ = try await kinds[only].call() }
                    let allocations = Double(malloc_counter_stop()) / Double(counted)
                    print("\(kinds[only].name): \(format(allocations)) allocations per call (\(counted) calls)")
                    return
                }
                // Warm-up: connections, caches.
                for _ in 0..<200 {
                    for kind in kinds { _ = try await kind.call() }
                }
                var times = Array(repeating: [Double](), count: kinds.count)
                var cpuTimes = Array(repeating: [Double](), count: kinds.count)
                for round in 0..<rounds {
                    // Each kind runs first in turn.
                    for offset in 0..<kinds.count {
                        let index = (round + offset) % kinds.count
                        let start = ContinuousClock.now
                        let cpuStart = processCPUMicroseconds()
                        for _ in 0..<callsPerRound { _ = try await kinds[index].call() }
                        times[index].append(microseconds(ContinuousClock.now - start) / Double(callsPerRound))
                        cpuTimes[index].append((processCPUMicroseconds() - cpuStart) / Double(callsPerRound))
                    }
                }
                if rounds > 0 {
                    print(
                        "unary call, time per call (median of \(rounds) rounds of \(callsPerRound) sequential calls):"
                    )
                    printTimes(times, of: kinds.map(\.name))
                    print(
                        "unary call, CPU time per call (the whole process, user + system; median of the same rounds):"
                    )
                    printTimes(cpuTimes, of: kinds.map(\.name))
                }
                // Allocations: counting costs an atomic add per allocation, so not while timing.
                var allocations = Array(repeating: Double.infinity, count: kinds.count)
                for _ in 0..<3 {
                    for (index, kind) in kinds.enumerated() {
                        malloc_counter_start()
                        for _ in 0..<counted { _ = try await kind.call() }
                        allocations[index] = min(allocations[index], Double(malloc_counter_stop()) / Double(counted))
                    }
                }
                print(
                    "unary call, allocations per call (both sides, the whole process; least of 3 runs of \(counted)):"
                )
                for (index, kind) in kinds.enumerated() {
                    print(
                        "  \(padded(kind.name)) \(format(allocations[index])), "
                            + "\(format(allocations[index] - allocations[0])) more"
                    )
                }
            }
        }
    }
}

/// The median time per call of each kind, its ratio to the first kind's median, and the median of its per-round
/// ratios to the first kind (each round runs every kind back to back, so a round's ratio leaves out the load's
/// drift from round to round).
func printTimes(_ times: [[Double]], of names: [String]) {
    let plainMedian = median(times[0])
    for (index, name) in names.enumerated() {
        let middle = median(times[index])
        let paired = median(zip(times[index], times[0]).map { $0 / $1 })
        print(
            "  \(padded(name)) \(format(middle)) µs, "
                + "\(format(middle / plainMedian, digits: 3))×, paired \(format(paired, digits: 3))× "
                + "(rounds \(format(times[index].min()!))…\(format(times[index].max()!)))"
        )
    }
}

/// The CPU time the process has used (user and system, all threads), in microseconds: on a machine shared with
/// other work, what a call costs without the time it waits for a core.
func processCPUMicroseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
    let system = Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
    return user + system
}

func microseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1e6 + Double(attoseconds) / 1e12
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
    return sorted[max(0, index)]
}

func format(_ value: Double, digits: Int = 1) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}

/// `name` and spaces to 42 characters.
func padded(_ name: String) -> String {
    name + String(repeating: " ", count: max(0, 42 - name.count))
}
