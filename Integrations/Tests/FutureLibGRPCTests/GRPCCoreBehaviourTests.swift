import FutureLibGRPC
import FutureLibHTTPDeadline
import GRPCCore
import GRPCNIOTransportHTTP2
import Testing

/// What grpc-swift-2 does on its own (no FutureLib), over its HTTP/2 transport on loopback: the facts the
/// interceptors build on.
@Suite(.timeLimit(.minutes(1)))
struct GRPCCoreBehaviourTests {
    /// What a handler that ignores cancellation saw once it stopped waiting.
    struct Seen: Sendable {
        var handleCancelled: Bool
        var taskCancelled: Bool
        var timeoutHeader: String?
    }

    /// A handler that waits (up to `patience`) for its RPC's cancellation handle, ignoring task cancellation, then
    /// records what it saw.
    static func waitingService(
        started: Recorder<Void>,
        seen: Recorder<Seen>,
        patience: Duration = .seconds(5)
    ) -> ProbeService {
        ProbeService { message, metadata, context in
            if message == "ping" { return "pong" }
            started.record(())
            let clock = ContinuousClock()
            let end = clock.now + patience
            while !context.cancellation.isCancelled, clock.now < end {
                try? await Task.sleep(for: .milliseconds(2))
            }
            seen.record(
                Seen(
                    handleCancelled: context.cancellation.isCancelled,
                    taskCancelled: Task.isCancelled,
                    timeoutHeader: metadata[stringValues: "grpc-timeout"].first(where: { _ in true })
                )
            )
            return "late"
        }
    }

    @Test func `a client that cancels its task fires the handle, never the handler's task, and sees UNKNOWN`()
        async throws
    {
        let started = Recorder<Void>()
        let seen = Recorder<Seen>()
        try await withLoopbackServer(Self.waitingService(started: started, seen: seen)) { port, _ in
            try await withLoopbackClient(port: port) { client in
                let call = Task { try await client.probe("x") }
                _ = try await started.wait()
                call.cancel()
                let outcome = await call.result
                print("grpc-swift-2: a client that cancels its task sees \(outcome)")
                #expect(throws: RPCError.self) { try outcome.get() }
                #expect((try? outcome.get()) == nil)
                let error = try #require(outcome.error as? RPCError)
                #expect(error.code == .unknown)
            }
        }
        let record = try #require(try await seen.wait().first)
        #expect(record.handleCancelled)
        #expect(!record.taskCancelled)
    }

    @Test func `a deadline fires the handle, never the handler's task; grpc-timeout stays in the metadata`()
        async throws
    {
        let started = Recorder<Void>()
        let seen = Recorder<Seen>()
        try await withLoopbackServer(Self.waitingService(started: started, seen: seen)) { port, _ in
            try await withLoopbackClient(port: port) { client in
                _ = try await client.probe("ping")  // connected: the timeout is not spent connecting
                var options = CallOptions.defaults
                // Long enough for the handler to start on a loaded machine: a deadline that passes before the
                // handler runs leaves nothing to observe (GRPCCore then never calls it).
                options.timeout = .seconds(1)
                await #expect(throws: RPCError.self) { try await client.probe("x", options: options) }
            }
        }
        let record = try #require(try await seen.wait().first)
        #expect(record.handleCancelled)
        #expect(!record.taskCancelled)
        print("grpc-swift-2: a 1 s timeout arrives as grpc-timeout: \(record.timeoutHeader ?? "nil")")
        #expect(record.timeoutHeader != nil)
    }

    @Test func `a grpc-timeout of 8 digits is ignored: the handle does not fire at it`() async throws {
        let started = Recorder<Void>()
        let seen = Recorder<Seen>()
        let service = Self.waitingService(started: started, seen: seen, patience: .seconds(1))
        try await withLoopbackServer(service) { port, _ in
            try await withLoopbackClient(port: port) { client in
                // 50 ms, in 8 digits (gRPC's grammar allows 1 to 8): the handler answers after 1 s.
                let answer = try await client.probe("x", metadata: ["grpc-timeout": "50000000n"])
                #expect(answer == "late")
            }
        }
        let record = try #require(try await seen.wait().first)
        #expect(!record.handleCancelled)
        #expect(record.timeoutHeader == "50000000n")
    }

    @Test func `the grpc-timeout FutureLib writes is enforced: the handle fires at it`() async throws {
        let started = Recorder<Void>()
        let seen = Recorder<Seen>()
        let service = Self.waitingService(started: started, seen: seen, patience: .seconds(40))
        try await withLoopbackServer(service) { port, _ in
            try await withLoopbackClient(port: port) { client in
                // 10 s, as the interceptors and the deadline header write it: in 7 digits, which GRPCCore reads. In
                // the grammar's 8 (10000000u) GRPCCore would ignore it, as above, and the handler would wait 40 s.
                let timeout = GRPCTimeout.format(.seconds(10))
                let result = await outcome { try await client.probe("x", metadata: ["grpc-timeout": "\(timeout)"]) }
                print("grpc-swift-2: the client of a server-enforced grpc-timeout \(timeout) sees \(result)")
            }
        }
        let record = try #require(try await seen.wait().first)
        #expect(record.handleCancelled)
        #expect(record.timeoutHeader == "10000m")
    }

    /// GRPCCore's parser of `grpc-timeout` reads a sign and reaches a precondition on a negative amount, before any
    /// interceptor runs: the whole process stops (in a child process here, which a crash is expected to end).
    @Test func `a negative grpc-timeout stops the server's process`() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            do {
                try await withLoopbackServer(ProbeService { _, _, _ in "answered" }) { port, _ in
                    try await withLoopbackClient(port: port) { client in
                        _ = try await client.probe("x", metadata: ["grpc-timeout": "-1S"])
                    }
                }
            } catch {
                // An error is an outcome too, and exits normally: only a crash fails the process.
            }
        }
        // The crash is GRPCCore's precondition in its `Timeout`, not some other failure of the child process.
        let standardError = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(standardError.contains("Timeout.swift"))
    }

    @Test func `graceful shutdown fires the handle, never the handler's task`() async throws {
        let started = Recorder<Void>()
        let seen = Recorder<Seen>()
        try await withLoopbackServer(Self.waitingService(started: started, seen: seen)) { port, server in
            try await withLoopbackClient(port: port) { client in
                let answer = Task { try await client.probe("x") }
                _ = try await started.wait()
                server.beginGracefulShutdown()
                #expect(try await answer.value == "late")
            }
        }
        let record = try #require(try await seen.wait().first)
        #expect(record.handleCancelled)
        #expect(!record.taskCancelled)
    }
}
