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

    /// A service whose handler records whether its token was already cancelled when it started, and its reason.
    static func recordingService(cancelledAtStart: Recorder<Bool>, reasons: Recorder<String>) -> ProbeService {
        ProbeService { message, _, _ in
            if message == "ping" { return "pong" }
            let token = RPCCancellation.token
            cancelledAtStart.record(token.isCancellationRequested)
            reasons.record(reasonName(token))
            try token.checkCancellation()
            return "done"
        }
    }

    @Test(
        "an RPC that starts once the service group's graceful shutdown began is cancelled before its handler runs",
        arguments: [false, true]
    )
    func startsAfterShutdown(firstRPCBefore: Bool) async throws {
        let cancelledAtStart = Recorder<Bool>()
        let reasons = Recorder<String>()
        let service = Self.recordingService(cancelledAtStart: cancelledAtStart, reasons: reasons)
        try await testGracefulShutdown { trigger in
            try await withLoopbackServer(service, interceptors: [ServerCancellationInterceptor()]) { port, _ in
                try await withLoopbackClient(port: port) { client in
                    // With a first RPC before the shutdown, the watch is running when it begins; without, the first
                    // RPC arrives when the group is already shutting down.
                    if firstRPCBefore {
                        let first = try await client.probe("ping")
                        #expect(first == "pong")
                    }
                    trigger.triggerGracefulShutdown()
                    let error = await #expect(throws: RPCError.self) { try await client.probe("x") }
                    #expect(error?.code == .unavailable)
                }
            }
        }
        #expect(cancelledAtStart.all == [true])
        #expect(reasons.all == ["GracefulShutdownError"])
    }

    /// A value bound as a task-local around a server: its RPCs' tasks inherit it, and so does the watch's task.
    final class Sentinel: Sendable {
        @TaskLocal static var current: Sentinel?
    }

    @Test func `the watch ends with the server: its interceptor's shutdown is released, and so is its task`()
        async throws
    {
        weak var released: ServerShutdown?
        weak var inherited: Sentinel?
        try await testGracefulShutdown { _ in
            let interceptor = ServerCancellationInterceptor()
            released = interceptor.serverShutdown
            let sentinel = Sentinel()
            inherited = sentinel
            try await Sentinel.$current.withValue(sentinel) {
                try await withLoopbackServer(
                    ProbeService { _, _, _ in "pong" },
                    interceptors: [interceptor]
                ) { port, _ in
                    let answer = try await withLoopbackClient(port: port) { client in try await client.probe("ping") }
                    #expect(answer == "pong")
                }
            }
            // The group never shut down gracefully: the watch still waits, holding its shutdown weakly.
            withExtendedLifetime(interceptor) { #expect(released != nil) }
        }
        // The interceptor and its server are gone: nothing else holds the shutdown (a task that did would keep it),
        // and the watch's task ended (it held the sentinel, inherited from the first RPC's task).
        try await eventually { released == nil && inherited == nil }
        #expect(released == nil)
        #expect(inherited == nil)
    }
}
