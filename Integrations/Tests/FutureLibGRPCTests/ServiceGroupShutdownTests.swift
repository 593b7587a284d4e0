import GRPCCore
import GRPCNIOTransportHTTP2
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@testable import FutureLibGRPC

/// A `ServiceGroup`'s graceful shutdown as the interceptor watches it: once for the server, from a task the first
/// RPC starts, not in each RPC.
@Suite(.timeLimit(.minutes(1)))
struct ServiceGroupShutdownTests {
    @Test func `a service group's graceful shutdown reaches a streaming producer while no handler runs`()
        async throws
    {
        let producing = Recorder<Void>()
        let reasons = Recorder<String>()
        var service = ProbeService { _, _, _ in "" }
        service.serverStreaming = { _, writer in
            // The handler has returned its response: only the producer runs, in the scope GRPCCore gives it.
            let token = RPCCancellation.token
            try await writer.write("first")
            producing.record(())
            await token.wait()
            reasons.record(reasonName(token))
            try token.checkCancellation()
        }
        try await testGracefulShutdown { trigger in
            try await withLoopbackServer(service, interceptors: [ServerCancellationInterceptor()]) { port, _ in
                try await withLoopbackClient(port: port) { client in
                    let stream = Task {
                        try await client.serverStreaming(
                            request: ClientRequest(message: "x"),
                            descriptor: Probe.serverStreaming,
                            serializer: UTF8Serializer(),
                            deserializer: UTF8Deserializer(),
                            options: .defaults
                        ) { response -> RPCError.Code? in
                            do {
                                for try await _ in response.messages {}
                                return nil
                            } catch let error as RPCError {
                                return error.code
                            }
                        }
                    }
                    _ = try await producing.wait()
                    trigger.triggerGracefulShutdown()
                    #expect(try await stream.value == .unavailable)
                }
            }
        }
        #expect(reasons.all == ["GracefulShutdownError"])
    }

    @Test func `an RPC that starts after the service group's graceful shutdown began is cancelled at once`()
        async throws
    {
        let started = Recorder<Void>()
        let reasons = Recorder<String>()
        let service = ServerCancellationInterceptorTests.waitingService(started: started, reasons: reasons)
        try await testGracefulShutdown { trigger in
            try await withLoopbackServer(service, interceptors: [ServerCancellationInterceptor()]) { port, _ in
                try await withLoopbackClient(port: port) { client in
                    // The first RPC starts the watch; the shutdown begins between the two.
                    let first = try await client.probe("ping")
                    #expect(first == "pong")
                    trigger.triggerGracefulShutdown()
                    let error = await #expect(throws: RPCError.self) { try await client.probe("x") }
                    #expect(error?.code == .unavailable)
                }
            }
        }
        #expect(reasons.all == ["GracefulShutdownError"])
    }

    @Test func `the watch ends with the server: its interceptor's shutdown is released, no task keeps it`()
        async throws
    {
        weak var released: ServerShutdown?
        try await testGracefulShutdown { _ in
            let interceptor = ServerCancellationInterceptor()
            released = interceptor.serverShutdown
            try await withLoopbackServer(
                ProbeService { _, _, _ in "pong" },
                interceptors: [interceptor]
            ) { port, _ in
                let answer = try await withLoopbackClient(port: port) { client in try await client.probe("ping") }
                #expect(answer == "pong")
            }
            // The group never shut down gracefully: the watch still waits, holding its shutdown weakly.
            #expect(released != nil)
        }
        // The interceptor and its server are gone: nothing else holds the shutdown (a task that did would keep it).
        try await eventually { released == nil }
        #expect(released == nil)
    }
}
