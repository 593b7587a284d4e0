import FutureLibGRPC
import FutureLibHTTPDeadline
import GRPCCore
import GRPCNIOTransportHTTP2
import Testing

/// The `cancellationToken:` calls on `GRPCClient`, against a loopback server under `ServerCancellationInterceptor`.
@Suite(.timeLimit(.minutes(1)))
struct GRPCClientCancellationTests {
    @Test func `a client token cancels the call in flight: the server sees it, the caller sees CANCELLED`()
        async throws
    {
        let started = Recorder<Void>()
        let reasons = Recorder<String>()
        try await withLoopbackServer(
            ServerCancellationInterceptorTests.waitingService(started: started, reasons: reasons),
            interceptors: [ServerCancellationInterceptor()]
        ) { port, _ in
            try await withLoopbackClient(port: port) { client in
                let request = CancellationRequest()
                let answer = Task { try await client.probe("x", cancellationToken: request.token) }
                _ = try await started.wait()
                request.cancel()
                let error = await #expect(throws: RPCError.self) { try await answer.value }
                #expect(error?.code == .cancelled)
                #expect(error?.cause is CancellationError)
                #expect(!Task.isCancelled)  // the call ran in a child task: the caller's task is not cancelled
                _ = try await reasons.wait()
            }
        }
        #expect(reasons.all == ["RPCCancelledByClientError"])
    }

    @Test func `a client token's timer is the call's timeout: it ends DEADLINE_EXCEEDED on both sides`() async throws {
        let started = Recorder<Void>()
        let reasons = Recorder<String>()
        try await withLoopbackServer(
            ServerCancellationInterceptorTests.waitingService(started: started, reasons: reasons),
            interceptors: [ServerCancellationInterceptor()]
        ) { port, _ in
            try await withLoopbackClient(port: port) { client in
                _ = try await client.probe("ping")  // connected: the timeout is not spent connecting
                let token = CancellationRequest(cancelAfter: .milliseconds(200)).token
                let error = await #expect(throws: RPCError.self) {
                    try await client.probe("x", cancellationToken: token)
                }
                #expect(error?.code == .deadlineExceeded)
                // GRPCCore's timer for the same deadline may throw first; the token's fires too.
                try await eventually { token.isCancellationRequested }
                #expect(token.cancellationReason is DeadlineExceededError)
                // A server that received the call sees it end (on a loaded machine it may not have, in 200 ms).
                if !started.all.isEmpty { _ = try await reasons.wait() }
            }
        }
        // The token's time left went out as the call's grpc-timeout, so the server's token fires at the same deadline:
        // with DeadlineExceededError when its own timer comes first, with RPCCancelledByClientError when the client's
        // reset of the stream at that deadline arrives first (a race of two timers set to one instant; what goes out
        // is checked by PropagationTests' "a callee never gets more time than the caller had left").
        print("a client token's 200 ms timer: the server's token saw \(reasons.all)")
        #expect(reasons.all.count == started.all.count)
        #expect(reasons.all.allSatisfy { ["DeadlineExceededError", "RPCCancelledByClientError"].contains($0) })
    }

    /// The token's timer, not GRPCCore's, enforces a token's deadline: the call goes without `CallOptions.timeout`
    /// and writes the time left itself, rounded down.
    @Test func `a token's deadline goes out rounded down as grpc-timeout, and its timer ends the call with its reason`()
        async throws
    {
        let sent = Recorder<String>()
        let service = ProbeService { message, metadata, _ in
            sent.record(metadata[stringValues: "grpc-timeout"].joined(separator: ","))
            // No interceptor, and a handler that ignores the handle: the server cannot end the call first.
            if message == "wait" { try? await Task.sleep(for: .seconds(2)) }
            return message
        }
        try await withLoopbackServer(service, interceptors: []) { port, _ in
            try await withLoopbackClient(port: port) { client in
                _ = try await client.probe("ping")  // connected
                let long = CancellationRequest(cancelAfter: .seconds(100))
                let before = try #require(long.token.timeRemaining)
                #expect(try await client.probe("x", cancellationToken: long.token) == "x")
                let value = try #require(sent.all.last)
                print("a token 100 s from now sends grpc-timeout \(value)")
                let timeout = try #require(GRPCTimeout.parse(value))
                #expect(timeout <= before)
                #expect(timeout > .seconds(99))
                let short = CancellationRequest(cancelAfter: .milliseconds(200)).token
                let error = await #expect(throws: RPCError.self) {
                    try await client.probe("wait", cancellationToken: short)
                }
                #expect(error?.code == .deadlineExceeded)
                #expect(error?.cause is DeadlineExceededError)
            }
        }
    }

    /// The server's timer for the deadline the token sent can run before the token's own (it starts later, but a busy
    /// machine can delay the token's more): the call then ends only once the token's timer fired, with its reason, so
    /// that the caller never sees a call stopped at its token's deadline while the token has not fired (the HTTP
    /// edge of `make demo-services` answered `500` rather than `504` so).
    @Test func `a server's DEADLINE_EXCEEDED at the token's deadline ends the call once the token's timer fired`()
        async throws
    {
        let clock = HeldClock()
        let service = ProbeService { message, _, _ in
            guard message == "expire" else { return message }
            clock.pass(.milliseconds(200))  // the token's deadline passes; its timer has not run
            throw RPCError(code: .deadlineExceeded, message: "the server's timer")
        }
        try await withLoopbackServer(service, interceptors: []) { port, _ in
            try await withLoopbackClient(port: port) { client in
                _ = try await client.probe("ping")  // connected
                let request = CancellationRequest(cancelAfter: .milliseconds(200), clock: clock)
                let token = request.token
                let call = Task { () -> (RPCError?, firedWhenTheCallEnded: Bool) in
                    do {
                        _ = try await client.probe("expire", cancellationToken: token)
                        return (nil, token.isCancellationRequested)
                    } catch {
                        return (error as? RPCError, token.isCancellationRequested)
                    }
                }
                // The late timer: once the handler has moved the clock past the deadline, the server's status has had
                // time to arrive (were it not, the test could not fail). Waiting for the handler first: a timer fired
                // before the deadline passed would fire nothing, and the call would wait for it for ever.
                let limit = ContinuousClock.now.advanced(by: .seconds(60))
                while clock.now < .milliseconds(200), ContinuousClock.now < limit {
                    try await Task.sleep(for: .milliseconds(5))
                }
                try #require(clock.now >= .milliseconds(200), "the handler did not run")
                try await Task.sleep(for: .milliseconds(300))
                clock.fireDue()
                let (error, fired) = await call.value
                #expect(fired)
                #expect(error?.code == .deadlineExceeded)
                #expect(error?.cause is DeadlineExceededError)
                withExtendedLifetime(request) {}
            }
        }
    }

    /// A server's own shorter deadline is not the token's: its `DEADLINE_EXCEEDED` ends the call at once.
    @Test func `a server's DEADLINE_EXCEEDED while the token has time left ends the call at once`() async throws {
        let service = ProbeService { message, _, _ in
            guard message == "expire" else { return message }
            throw RPCError(code: .deadlineExceeded, message: "the server's own deadline")
        }
        try await withLoopbackServer(service, interceptors: []) { port, _ in
            try await withLoopbackClient(port: port) { client in
                let request = CancellationRequest(cancelAfter: .seconds(30))
                let error = await #expect(throws: RPCError.self) {
                    try await client.probe("expire", cancellationToken: request.token)
                }
                #expect(error?.code == .deadlineExceeded)
                #expect(!request.token.isCancellationRequested)
            }
        }
    }

    @Test func `a token already cancelled makes no call`() async throws {
        let started = Recorder<Void>()
        let reasons = Recorder<String>()
        try await withLoopbackServer(
            ServerCancellationInterceptorTests.waitingService(started: started, reasons: reasons),
            interceptors: [ServerCancellationInterceptor()]
        ) { port, _ in
            try await withLoopbackClient(port: port) { client in
                let error = await #expect(throws: RPCError.self) {
                    try await client.probe("x", cancellationToken: .cancelled)
                }
                #expect(error?.code == .cancelled)
                let pong = try await client.probe("ping")
                #expect(pong == "pong")
            }
        }
        #expect(started.all.isEmpty)
    }

    @Test func `a client token cancels a server stream while it is read`() async throws {
        let reasons = Recorder<String>()
        var service = ProbeService { _, _, _ in "" }
        service.serverStreaming = { _, writer in
            let token = RPCCancellation.token
            do {
                while true {
                    try await writer.write("tick")
                    try await Task.sleep(for: .milliseconds(5))
                }
            } catch {
                try await eventually { token.isCancellationRequested }
                reasons.record(reasonName(token))
                throw error
            }
        }
        try await withLoopbackServer(service, interceptors: [ServerCancellationInterceptor()]) { port, _ in
            try await withLoopbackClient(port: port) { client in
                let request = CancellationRequest()
                let error = await #expect(throws: RPCError.self) {
                    try await client.serverStreaming(
                        request: ClientRequest(message: "x"),
                        descriptor: Probe.serverStreaming,
                        serializer: UTF8Serializer(),
                        deserializer: UTF8Deserializer(),
                        cancellationToken: request.token
                    ) { response in
                        var count = 0
                        for try await _ in response.messages {
                            count += 1
                            if count == 5 { request.cancel() }
                        }
                        return count
                    }
                }
                #expect(error?.code == .cancelled)
                _ = try await reasons.wait()
            }
        }
        #expect(reasons.all == ["RPCCancelledByClientError"])
    }

    /// The extreme deadlines a token can have: its time left becomes the call's timeout, which GRPCCore adds to
    /// its clock's now and writes as `grpc-timeout`.
    @Test(arguments: [Duration.seconds(Int64.max), .seconds(Int64.max / 2), Duration(attoseconds: .max)])
    func `a token whose deadline is the far future makes an ordinary call`(delay: Duration) async throws {
        let seen = Recorder<String>()
        let service = ProbeService { message, metadata, _ in
            seen.record(metadata[stringValues: "grpc-timeout"].joined(separator: ","))
            return message
        }
        try await withLoopbackServer(service, interceptors: [ServerCancellationInterceptor()]) { port, _ in
            try await withLoopbackClient(port: port) { client in
                let request = CancellationRequest(cancelAfter: delay)
                let answer = try await client.probe("x", cancellationToken: request.token)
                #expect(answer == "x")
            }
        }
        print("a token \(delay) from now sends grpc-timeout \(seen.all)")
    }

    /// GRPCCore alone traps on these `CallOptions.timeout`s; through a `cancellationToken:` call, a negative one is
    /// no time left and a huge one the largest `grpc-timeout`.
    @Test func `extreme call timeouts have a meaning: none left, or the largest grpc-timeout`() async throws {
        let started = Recorder<Void>()
        let reasons = Recorder<String>()
        try await withLoopbackServer(
            ServerCancellationInterceptorTests.waitingService(started: started, reasons: reasons),
            interceptors: [ServerCancellationInterceptor()]
        ) { port, _ in
            try await withLoopbackClient(port: port) { client in
                for timeout in [Duration.seconds(Int64.min), .seconds(-1), Duration(attoseconds: -1)] {
                    for token in [CancellationToken.none, CancellationRequest().token] {
                        var options = CallOptions.defaults
                        options.timeout = timeout
                        let error = await #expect(throws: RPCError.self) {
                            try await client.probe("x", options: options, cancellationToken: token)
                        }
                        #expect(error?.code == .deadlineExceeded)
                    }
                }
                for timeout in [Duration.seconds(Int64.max), Duration(attoseconds: .max)] {
                    var options = CallOptions.defaults
                    options.timeout = timeout
                    let answer = try await client.probe("ping", options: options, cancellationToken: .none)
                    #expect(answer == "pong")
                }
            }
        }
    }
}
