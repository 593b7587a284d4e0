import FutureLib
import FutureLibGRPC
import FutureLibHTTPDeadline
import GRPCCore
import GRPCNIOTransportHTTP2
import NIOConcurrencyHelpers
import Testing

extension GRPCLoopbackSuites {
    /// Three servers in one process on loopback, edge → middle → leaf, each calling the next through a `GRPCClient`
    /// with `ClientCancellationInterceptor` and GRPCCore's own call methods: the inbound RPC's deadline and
    /// cancellation reach the leaf with nobody passing a token.
    @Suite(.timeLimit(.minutes(1)))
    struct PropagationTests {
        /// What a hop saw: its name, its token's reason, when it fired, and the time left when it started.
        struct Hop: Sendable {
            var name: String
            var reason: String
            var firedAt: ContinuousClock.Instant
            var timeLeftAtStart: Duration?
        }

        /// A hop that, if `next` is given, calls it and else waits for its token; it records what it saw and rethrows.
        /// With `viaFuture`, it calls from a `Future { }`, which runs on FutureLib's pool like a detached task (no
        /// task-local values): it passes the token explicitly.
        static func hop(
            _ name: String,
            next: Client?,
            viaFuture: Bool = false,
            hops: Recorder<Hop>,
            started: Recorder<String>
        ) -> ProbeService {
            ProbeService { message, _, _ in
                // A warm-up through the chain: connects every hop before a test times anything.
                if message == "ping" { return try await next?.probe("ping") ?? "pong" }
                started.record(name)
                let token = RPCCancellation.token
                let left = RPCCancellation.timeRemaining
                do {
                    if let next {
                        if viaFuture {
                            return try await Future { try await next.probe(message, cancellationToken: token) }.value()
                        }
                        return try await next.probe(message)
                    }
                    await token.wait()
                    try token.checkCancellation()
                    return "leaf"
                } catch {
                    try await eventually { token.isCancellationRequested }
                    hops.record(Hop(name: name, reason: reasonName(token), firedAt: .now, timeLeftAtStart: left))
                    throw error
                }
            }
        }

        /// Runs leaf, middle and edge servers (the middle calling the leaf from a future when `viaFuture`), and a
        /// client of the edge.
        static func withChain<T: Sendable>(
            hops: Recorder<Hop>,
            started: Recorder<String>,
            viaFuture: Bool = false,
            edgeInterceptor: ServerCancellationInterceptor = ServerCancellationInterceptor(),
            _ body: (_ edge: Client, _ edgeServer: Server) async throws -> T
        ) async throws -> T {
            let propagating: [any ClientInterceptor] = [ClientCancellationInterceptor()]
            // One interceptor per server, as its documentation asks.
            return try await withLoopbackServer(
                hop("leaf", next: nil, hops: hops, started: started),
                interceptors: [ServerCancellationInterceptor()]
            ) {
                leafPort,
                _ in
                try await withLoopbackClient(port: leafPort, interceptors: propagating) { leaf in
                    try await withLoopbackServer(
                        hop("middle", next: leaf, viaFuture: viaFuture, hops: hops, started: started),
                        interceptors: [ServerCancellationInterceptor()]
                    ) { middlePort, _ in
                        try await withLoopbackClient(port: middlePort, interceptors: propagating) { middle in
                            try await withLoopbackServer(
                                hop("edge", next: middle, hops: hops, started: started),
                                interceptors: [edgeInterceptor]
                            ) { edgePort, edgeServer in
                                try await withLoopbackClient(port: edgePort) { edge in
                                    // GRPCCore computes a call's grpc-timeout before it waits for a connection, so a
                                    // first call's budget would shrink by the connection's setup: connect first.
                                    _ = try await edge.probe("ping")
                                    return try await body(edge, edgeServer)
                                }
                            }
                        }
                    }
                }
            }
        }

        static func report(_ hops: [Hop], since start: ContinuousClock.Instant, _ title: String) {
            for hop in hops.sorted(by: { $0.firedAt < $1.firedAt }) {
                let left = hop.timeLeftAtStart.map { " (time left at start: \($0))" } ?? ""
                print("\(title): \(hop.name) fired \(hop.reason) \(hop.firedAt - start) after\(left)")
            }
        }

        @Test(arguments: [false, true])
        func `a client that gives up cancels every hop`(viaFuture: Bool) async throws {
            let hops = Recorder<Hop>()
            let started = Recorder<String>()
            try await Self.withChain(hops: hops, started: started, viaFuture: viaFuture) { edge, _ in
                let call = Task { try await edge.probe("x") }
                _ = try await started.wait(for: 3)
                let gaveUp = ContinuousClock.now
                call.cancel()
                _ = await call.result
                let seen = try await hops.wait(for: 3)
                Self.report(
                    seen,
                    since: gaveUp,
                    viaFuture ? "client gives up (middle calls from a future)" : "client gives up"
                )
            }
            let reasons = Dictionary(uniqueKeysWithValues: hops.all.map { ($0.name, $0.reason) })
            // Reasons do not cross the wire: every hop sees its own caller go away.
            #expect(
                reasons == [
                    "edge": "RPCCancelledByClientError", "middle": "RPCCancelledByClientError",
                    "leaf": "RPCCancelledByClientError",
                ]
            )
        }

        @Test(arguments: [false, true])
        func `a deadline set at the edge reaches the leaf, shrinking`(viaFuture: Bool) async throws {
            let hops = Recorder<Hop>()
            let started = Recorder<String>()
            let start = NIOLockedValueBox(ContinuousClock.now)
            try await Self.withChain(hops: hops, started: started, viaFuture: viaFuture) { edge, _ in
                start.withLockedValue { $0 = .now }
                var options = CallOptions.defaults
                options.timeout = .seconds(1)
                let error = await #expect(throws: RPCError.self) { try await edge.probe("x", options: options) }
                #expect(error?.code == .deadlineExceeded)
                let seen = try await hops.wait(for: 3)
                let title =
                    viaFuture ? "1 s deadline at the edge (middle calls from a future)" : "1 s deadline at the edge"
                Self.report(seen, since: start.withLockedValue { $0 }, title)
            }
            let byName = Dictionary(uniqueKeysWithValues: hops.all.map { ($0.name, $0) })
            #expect(
                byName.mapValues(\.reason) == [
                    "edge": "DeadlineExceededError", "middle": "DeadlineExceededError", "leaf": "DeadlineExceededError",
                ]
            )
            let edgeLeft = try #require(byName["edge"]?.timeLeftAtStart)
            let middleLeft = try #require(byName["middle"]?.timeLeftAtStart)
            let leafLeft = try #require(byName["leaf"]?.timeLeftAtStart)
            #expect(edgeLeft <= .seconds(1))
            #expect(middleLeft <= edgeLeft)
            #expect(leafLeft <= middleLeft)
            // The leaf stopped at the deadline, not after its own work (it would wait forever): its token fired
            // with DeadlineExceededError, checked above; when is printed (a wall-clock bound, "within 5 s", would
            // fail a correct run on a busy machine).
        }

        @Test func `graceful shutdown at the edge cancels the chain; the client sees UNAVAILABLE`() async throws {
            let hops = Recorder<Hop>()
            let started = Recorder<String>()
            let edgeInterceptor = ServerCancellationInterceptor()
            try await Self.withChain(hops: hops, started: started, edgeInterceptor: edgeInterceptor) {
                edge,
                edgeServer in
                let answer = Task { try await edge.probe("x") }
                _ = try await started.wait(for: 3)
                let shutdown = ContinuousClock.now
                edgeInterceptor.beginGracefulShutdown()
                edgeServer.beginGracefulShutdown()
                let error = await #expect(throws: RPCError.self) { try await answer.value }
                #expect(error?.code == .unavailable)
                Self.report(try await hops.wait(for: 3), since: shutdown, "edge shuts down")
            }
            let reasons = Dictionary(uniqueKeysWithValues: hops.all.map { ($0.name, $0.reason) })
            #expect(
                reasons == [
                    "edge": "GracefulShutdownError", "middle": "RPCCancelledByClientError",
                    "leaf": "RPCCancelledByClientError",
                ]
            )
        }

        /// 100,000 s: what is left of it a moment later needs more than 8 digits of milliseconds, so the value sent
        /// is rounded to a unit: up, it would say all 100,000 s again.
        @Test func `a callee never gets more time than the caller had left: the time left goes out rounded down`()
            async throws
        {
            let sent = Recorder<String>()
            let leaf = ProbeService { _, metadata, _ in
                sent.record(metadata[stringValues: "grpc-timeout"].joined(separator: ","))
                return "leaf"
            }
            let propagating: [any ClientInterceptor] = [ClientCancellationInterceptor()]
            try await withLoopbackServer(leaf) { leafPort, _ in
                try await withLoopbackClient(port: leafPort, interceptors: propagating) { leafClient in
                    let edge = ProbeService { message, _, _ in try await leafClient.probe(message) }
                    try await withLoopbackServer(edge, interceptors: [ServerCancellationInterceptor()]) { edgePort, _ in
                        try await withLoopbackClient(port: edgePort) { client in
                            let answer = try await client.probe("x", metadata: ["grpc-timeout": "100000S"])
                            #expect(answer == "leaf")
                        }
                    }
                }
            }
            let value = try #require(sent.all.first)
            print("an inbound grpc-timeout of 100000S goes out as \(value)")
            let timeout = try #require(GRPCTimeout.parse(value))
            #expect(timeout < .seconds(100_000))
            #expect(timeout > .seconds(99_000))
        }

        @Test func `a call made inside detached outlives its cancelled parent`() async throws {
            let finished = Recorder<String>()
            let edgeStarted = Recorder<Void>()
            let leaf = ProbeService { _, _, _ in
                // Longer than the parent lives; a propagated cancellation would end it early.
                try await Task.sleep(for: .milliseconds(300))
                try RPCCancellation.token.checkCancellation()
                return "leaf done"
            }
            let propagating: [any ClientInterceptor] = [ClientCancellationInterceptor()]
            try await withLoopbackServer(leaf, interceptors: [ServerCancellationInterceptor()]) { leafPort, _ in
                try await withLoopbackClient(port: leafPort, interceptors: propagating) { leafClient in
                    let edge = ProbeService { _, _, _ in
                        Task {
                            let answer = await outcome {
                                try await RPCCancellation.detached { try await leafClient.probe("audit") }
                            }
                            finished.record((try? answer.get()) ?? "failed: \(answer)")
                        }
                        edgeStarted.record(())
                        await RPCCancellation.token.wait()
                        try RPCCancellation.token.checkCancellation()
                        return "edge"
                    }
                    try await withLoopbackServer(edge, interceptors: [ServerCancellationInterceptor()]) { edgePort, _ in
                        try await withLoopbackClient(port: edgePort) { client in
                            let error = await #expect(throws: RPCError.self) {
                                try await client.probe("x", metadata: ["grpc-timeout": "50m"])
                            }
                            #expect(error?.code == .deadlineExceeded)
                            let done = try await finished.wait()
                            #expect(done == ["leaf done"])
                        }
                    }
                }
            }
        }
    }
}
