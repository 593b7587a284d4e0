import FutureLibGRPC
import GRPCCore
import GRPCNIOTransportHTTP2
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// The server's token (`RPCCancellation.token`) under `ServerCancellationInterceptor`, on loopback.
@Suite(.timeLimit(.minutes(1)))
struct ServerCancellationInterceptorTests {
    /// A handler that waits (up to 10 s) for its token, records its reason, then fails with `CancellationError` if
    /// it fired; it answers `"ping"` with `"pong"` at once.
    static func waitingService(started: Recorder<Void>, reasons: Recorder<String>) -> ProbeService {
        ProbeService { message, _, _ in
            if message == "ping" { return "pong" }
            started.record(())
            let token = RPCCancellation.token
            let clock = ContinuousClock()
            let end = clock.now + .seconds(10)
            while !token.isCancellationRequested, clock.now < end {
                try? await Task.sleep(for: .milliseconds(1))
            }
            reasons.record(reasonName(token))
            try token.checkCancellation()
            return "done"
        }
    }

    @Test func `a client that cancels the RPC fires the token with RPCCancelledByClientError`() async throws {
        let started = Recorder<Void>()
        let reasons = Recorder<String>()
        let interceptor = ServerCancellationInterceptor()
        try await withLoopbackServer(
            Self.waitingService(started: started, reasons: reasons),
            interceptors: [interceptor]
        ) { port, _ in
            try await withLoopbackClient(port: port) { client in
                let call = Task { try await client.probe("x") }
                _ = try await started.wait()
                let cancelled = ContinuousClock.now
                call.cancel()
                _ = await call.result
                _ = try await reasons.wait()
                print("client cancel → server token: \(ContinuousClock.now - cancelled) (upper bound)")
            }
        }
        #expect(reasons.all == ["RPCCancelledByClientError"])
    }

    @Test func `the deadline fires the token with DeadlineExceededError and ends the RPC DEADLINE_EXCEEDED`()
        async throws
    {
        let started = Recorder<Void>()
        let reasons = Recorder<String>()
        try await withLoopbackServer(
            Self.waitingService(started: started, reasons: reasons),
            interceptors: [ServerCancellationInterceptor()]
        ) { port, _ in
            try await withLoopbackClient(port: port) { client in
                // The timeout in the metadata only: the client has no timer of its own, so the status it sees is
                // the server's.
                let error = await #expect(throws: RPCError.self) {
                    try await client.probe("x", metadata: ["grpc-timeout": "200m"])
                }
                #expect(error?.code == .deadlineExceeded)
            }
        }
        #expect(reasons.all == ["DeadlineExceededError"])
    }

    /// Values GRPCCore ignores (8 digits) or reads otherwise (the first of two): the token fires at the smallest.
    @Test(arguments: [["50000000n"], ["100S", "200m"]])
    func `the token fires at the smallest grpc-timeout sent, one GRPCCore ignores included`(
        values: [String]
    )
        async throws
    {
        let started = Recorder<Void>()
        let reasons = Recorder<String>()
        try await withLoopbackServer(
            Self.waitingService(started: started, reasons: reasons),
            interceptors: [ServerCancellationInterceptor()]
        ) { port, _ in
            try await withLoopbackClient(port: port) { client in
                var metadata = Metadata()
                for value in values { metadata.addString(value, forKey: "grpc-timeout") }
                let error = await #expect(throws: RPCError.self) { try await client.probe("x", metadata: metadata) }
                #expect(error?.code == .deadlineExceeded)
            }
        }
        #expect(reasons.all == ["DeadlineExceededError"])
    }

    @Test func `a service group's graceful shutdown fires the token outside swift-service-lifecycle's lock`()
        async throws
    {
        let started = Recorder<Void>()
        let shuttingDown = Recorder<Bool>()
        let reasons = Recorder<String>()
        let service = ProbeService { _, _, _ in
            let token = RPCCancellation.token
            token.onCancel {
                reasons.record(reasonName(token))
                // Reads swift-service-lifecycle's state, under its lock: a handler run inside that lock never returns.
                shuttingDown.record(Task.isShuttingDownGracefully)
            }
            started.record(())
            await token.wait()
            try token.checkCancellation()
            return "done"
        }
        try await testGracefulShutdown { trigger in
            try await withLoopbackServer(service, interceptors: [ServerCancellationInterceptor()]) { port, _ in
                try await withLoopbackClient(port: port) { client in
                    let answer = Task { try await client.probe("x") }
                    _ = try await started.wait()
                    trigger.triggerGracefulShutdown()
                    let error = await #expect(throws: RPCError.self) { try await answer.value }
                    #expect(error?.code == .unavailable)
                }
            }
        }
        #expect(try await shuttingDown.wait() == [true])
        #expect(reasons.all == ["GracefulShutdownError"])
    }

    @Test func `graceful shutdown fires the token with GracefulShutdownError and ends the RPC UNAVAILABLE`()
        async throws
    {
        let started = Recorder<Void>()
        let reasons = Recorder<String>()
        let interceptor = ServerCancellationInterceptor()
        try await withLoopbackServer(
            Self.waitingService(started: started, reasons: reasons),
            interceptors: [interceptor]
        ) { port, server in
            try await withLoopbackClient(port: port) { client in
                let answer = Task { try await client.probe("x") }
                _ = try await started.wait()
                interceptor.beginGracefulShutdown()
                server.beginGracefulShutdown()
                let error = await #expect(throws: RPCError.self) { try await answer.value }
                #expect(error?.code == .unavailable)
            }
        }
        #expect(reasons.all == ["GracefulShutdownError"])
    }

    @Test func `a shutdown token cancelled with no reason ends the RPC CANCELLED, never UNKNOWN`() async throws {
        let started = Recorder<Void>()
        let reasons = Recorder<String>()
        let stop = CancellationRequest()
        try await withLoopbackServer(
            Self.waitingService(started: started, reasons: reasons),
            interceptors: [ServerCancellationInterceptor(shutdown: stop.token)]
        ) { port, _ in
            try await withLoopbackClient(port: port) { client in
                let answer = Task { try await client.probe("x") }
                _ = try await started.wait()
                stop.cancel()
                let error = await #expect(throws: RPCError.self) { try await answer.value }
                #expect(error?.code == .cancelled)
            }
        }
        #expect(reasons.all == ["CancellationError"])
    }

    /// `nil`: the interceptor's default.
    @Test(arguments: [nil, true, false] as [Bool?])
    func `the handler's task is left alone by default, and cancelled when the token fires if asked`(
        asked: Bool?
    )
        async throws
    {
        var interceptor = ServerCancellationInterceptor()
        if let asked { interceptor = ServerCancellationInterceptor(cancelsHandlerTask: asked) }
        let cancelsHandlerTask = asked ?? false
        let taskCancelled = Recorder<Bool>()
        let service = ProbeService { _, _, _ in
            // Ignores the token; only a cancelled task ends the sleep early.
            let slept = (try? await Task.sleep(for: .seconds(1))) != nil
            taskCancelled.record(Task.isCancelled && !slept)
            try Task.checkCancellation()
            return "slept"
        }
        try await withLoopbackServer(
            service,
            interceptors: [interceptor]
        ) { port, _ in
            try await withLoopbackClient(port: port) { client in
                let outcome = await outcome { try await client.probe("x", metadata: ["grpc-timeout": "100m"]) }
                if cancelsHandlerTask {
                    // The handler threw once its token fired: DEADLINE_EXCEEDED, not UNKNOWN.
                    #expect((outcome.error as? RPCError)?.code == .deadlineExceeded)
                } else {
                    // GRPCCore's deadline only fires the handle: a handler that ignores it answers late.
                    #expect((try? outcome.get()) == "slept")
                }
            }
        }
        #expect(try await taskCancelled.wait() == [cancelsHandlerTask])
    }

    @Test func `a streaming response's producer has the token, and the deadline ends it DEADLINE_EXCEEDED`()
        async throws
    {
        let reasons = Recorder<String>()
        var service = ProbeService { _, _, _ in "" }
        service.serverStreaming = { _, writer in
            let token = RPCCancellation.token
            #expect(token.canBeCancelled)
            do {
                while true {
                    try token.checkCancellation()
                    try await writer.write("tick")
                    try await Task.sleep(for: .milliseconds(10))
                }
            } catch {
                reasons.record(reasonName(token))
                throw error
            }
        }
        try await withLoopbackServer(service, interceptors: [ServerCancellationInterceptor()]) { port, _ in
            try await withLoopbackClient(port: port) { client in
                let (count, status) = try await client.serverStreaming(
                    request: ClientRequest(message: "x", metadata: ["grpc-timeout": "200m"]),
                    descriptor: Probe.serverStreaming,
                    serializer: UTF8Serializer(),
                    deserializer: UTF8Deserializer(),
                    options: .defaults
                ) { response -> (Int, RPCError.Code?) in
                    var count = 0
                    do {
                        for try await _ in response.messages { count += 1 }
                        return (count, nil)
                    } catch let error as RPCError {
                        return (count, error.code)
                    }
                }
                // How many arrived is printed, not asserted: on a busy machine the first may not reach the client
                // within the 200 ms. The producer's token firing with DeadlineExceededError, checked below, shows it
                // was producing when the deadline passed.
                print("server streaming: \(count) messages before the 200 ms deadline")
                #expect(status == .deadlineExceeded)
            }
        }
        #expect(reasons.all == ["DeadlineExceededError"])
    }

    @Test func `outside a handler the token is none`() {
        #expect(!RPCCancellation.token.canBeCancelled)
        #expect(RPCCancellation.timeRemaining == nil)
    }
}
