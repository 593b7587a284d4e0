import Cancellation
import FutureLibGRPC
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCWorkService
import Synchronization

/// What the leaf tells the driver: that an RPC started, and when its token fired.
final class LeafSignals: Sendable {
    let started: AsyncStream<Void>
    let fired: AsyncStream<ContinuousClock.Instant>
    let startedContinuation: AsyncStream<Void>.Continuation
    let firedContinuation: AsyncStream<ContinuousClock.Instant>.Continuation

    init() {
        (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        (fired, firedContinuation) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
    }
}

/// The time from a client's cancel to the token of the handler of the third server firing: edge → middle → leaf,
/// three gRPC servers on loopback with `ServerCancellationInterceptor`, each hop calling the next through a client
/// with `ClientCancellationInterceptor` (nobody passes a token); the client calls the edge with a token and cancels
/// it once the leaf's handler runs.
func measureCancellationLatency(cancellations: Int) async throws {
    let signals = LeafSignals()
    let leaf = WorkService { message in
        if message == "ping" { return "pong" }
        let token = RPCCancellation.token
        token.onCancel { signals.firedContinuation.yield(.now) }
        signals.startedContinuation.yield(())
        await token.wait()
        try token.checkCancellation()
        return "leaf"
    }
    let server: [any ServerInterceptor] = [ServerCancellationInterceptor()]
    let propagating: [any ClientInterceptor] = [ClientCancellationInterceptor()]
    try await withLoopbackPair(leaf, interceptors: server, clientInterceptors: propagating) { leafClient in
        let middle = WorkService { try await leafClient.work($0) }
        try await withLoopbackPair(middle, interceptors: server, clientInterceptors: propagating) { middleClient in
            let edge = WorkService { try await middleClient.work($0) }
            try await withLoopbackPair(edge, interceptors: server, clientInterceptors: []) { edgeClient in
                _ = try await edgeClient.work("ping")
                var started = signals.started.makeAsyncIterator()
                var fired = signals.fired.makeAsyncIterator()
                var latencies: [Double] = []
                for _ in 0..<cancellations {
                    let request = CancellationRequest()
                    async let outcome: String? = try? await CallKind.futureLib(request.token).call(edgeClient)
                    _ = await started.next()
                    let cancelled = ContinuousClock.now
                    request.cancel()
                    guard let firedAt = await fired.next() else { break }
                    _ = await outcome
                    latencies.append(microseconds(firedAt - cancelled))
                }
                print(
                    """
                    client cancel → the leaf's token fires (three hops, loopback, \(latencies.count) cancellations):
                      median \(format(median(latencies))) µs, p99 \(format(percentile(latencies, 0.99))) µs, \
                    min \(format(latencies.min()!)) µs, max \(format(latencies.max()!)) µs
                    """
                )
            }
        }
    }
}

extension GRPCClient {
    /// A call of ``workMethod`` through GRPCCore's own method.
    func work(_ label: String) async throws -> String {
        try await unary(
            request: ClientRequest(message: label),
            descriptor: workMethod,
            serializer: UTF8Serializer(),
            deserializer: UTF8Deserializer(),
            options: .defaults
        ) { try $0.message }
    }
}
