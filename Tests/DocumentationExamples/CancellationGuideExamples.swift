import Cancellation
import FutureLib
import Synchronization
import Testing

// The examples of Documentation/Cancellation.md and of the Cancellation DocC catalog, in the
// order they appear there. Keep both in step: a renamed API breaks this file's build.

// MARK: - The model

/// Polling: check between steps. `checkCancellation()` throws `CancellationError`.
func sumOfSquares(upTo n: Int, cancellationToken: CancellationToken = .none) throws -> Int {
    var sum = 0
    for i in 1...max(n, 1) {
        if i % 1_000 == 0 { try cancellationToken.checkCancellation() }
        sum &+= i &* i
    }
    return sum
}

/// Subscribing: a handler stops work that cannot poll (a socket, a timer, a child process).
final class Download: Sendable {
    private let aborted = Atomic(false)
    var isAborted: Bool { aborted.load(ordering: .relaxed) }
    func start() {}
    func abort() { aborted.store(true, ordering: .relaxed) }
}

func run(_ download: Download, cancellationToken: CancellationToken) {
    let registration = cancellationToken.onCancel { download.abort() }
    download.start()
    _ = registration  // keep it to unregister when the download finishes first (see below)
}

/// Waiting: suspend until cancellation is requested (or the task is cancelled).
func serve(until shutdown: CancellationToken) async {
    await shutdown.wait()
    print("shutting down")
}

func theOwnerSide() -> Bool {
    let request = CancellationRequest()
    let token = request.token
    token.onCancel { print("cancellation requested") }

    request.cancel()  // prints "cancellation requested"
    request.cancel()  // does nothing: cancel() is idempotent

    do {
        _ = try sumOfSquares(upTo: 1_000_000, cancellationToken: token)
        return false
    } catch {
        return error is CancellationError  // printed "stopped" in the guide
    }
}

/// The DocC landing page's first example.
func checksum(of chunks: [[UInt8]], cancellationToken: CancellationToken = .none) throws -> UInt32 {
    var sum: UInt32 = 0
    for chunk in chunks {
        try cancellationToken.checkCancellation()  // throws CancellationError
        for byte in chunk { sum = sum &* 31 &+ UInt32(byte) }
    }
    return sum
}

/// The DocC model article: a handler that closes a connection, unregistered when the send finishes first.
final class Connection: Sendable {
    func close() {}
    func send(_ bytes: [UInt8]) async throws {}
}

func send(_ bytes: [UInt8], over connection: Connection, cancellationToken: CancellationToken) async throws {
    try cancellationToken.checkCancellation()
    let registration = cancellationToken.onCancel { connection.close() }
    defer { registration.unregister() }  // finished first: the handler is not needed any more
    try await connection.send(bytes)
}

// MARK: - Guarantees

func newestFirst() -> [String] {
    let order = Mutex<[String]>([])
    let request = CancellationRequest()
    request.token.onCancel { order.withLock { $0.append("registered first, runs last") } }
    request.token.onCancel { order.withLock { $0.append("registered last, runs first") } }
    request.cancel()
    return order.withLock { $0 }
}

func fetchConfiguration(cancellationToken: CancellationToken) throws -> [String: String] {
    let registration = cancellationToken.onCancel { print("abandoning the fetch") }
    defer { registration.unregister() }
    try cancellationToken.checkCancellation()
    return ["mode": "fast"]
}

final class Buffer: Sendable {
    private let bytes = Mutex<[UInt8]?>([])
    func append(_ more: [UInt8]) { bytes.withLock { $0?.append(contentsOf: more) } }
    func discard() { bytes.withLock { $0?.removeAll() } }
    func close() { bytes.withLock { $0 = nil } }
    var isClosed: Bool { bytes.withLock { $0 == nil } }
}

func transfer(_ data: [UInt8], through buffer: Buffer, cancellationToken: CancellationToken) {
    let registration = cancellationToken.onCancel { buffer.discard() }
    buffer.append(data)
    registration.unregisterAndWait()
    buffer.close()  // no handler is running or can still run: `discard()` never sees a closed buffer
}

func timers() -> CancellationToken {
    // A deadline for one operation: the token alone is enough, the timer keeps it cancellable.
    let deadline = CancellationRequest(cancelAfter: .seconds(5)).token

    // An idle timeout, pushed back on every sign of activity: the last call wins.
    let idle = CancellationRequest()
    idle.cancel(after: .seconds(30))
    idle.cancel(after: .seconds(30))  // re-armed: 30 s from now, not from the first call
    idle.cancel()
    return deadline
}

let shutdown = CancellationRequest()

func handle(cancellationToken: CancellationToken) throws {
    let deadline = CancellationRequest(cancelAfter: .seconds(10))
    let linked = CancellationRequest(linkedTo: [cancellationToken, deadline.token, shutdown.token])
    try linked.token.checkCancellation()
    // ... pass linked.token to the work
}

// Nothing unobservable is kept.
struct Request: Sendable {}
struct Response: Sendable {}

func respond(to request: Request, cancellationToken: CancellationToken) async throws -> Response {
    try cancellationToken.checkCancellation()
    return Response()
}

func handle(_ request: Request) async throws -> Response {
    let deadline = CancellationRequest(cancelAfter: .seconds(30))
    let linked = CancellationRequest(linkedTo: [shutdown.token, deadline.token])
    return try await respond(to: request, cancellationToken: linked.token)
}  // both dropped here: their links and timer go with them

// Reasons: why the work stopped.
struct ClientDisconnected: Error {}
struct ShuttingDown: Error {}

func statusCode(
    for request: Request,
    client: CancellationToken,
    shutdown: CancellationToken,
    deadline: Duration = .seconds(2)
) async -> Int {
    let timeout = CancellationRequest(cancelAfter: deadline)
    let stop = CancellationRequest(linkedTo: [client, timeout.token, shutdown])
    do {
        _ = try await respond(to: request, cancellationToken: stop.token)
        return 200
    } catch is CancellationError {
        switch stop.token.cancellationReason {
        case is ClientDisconnected: return 499  // nobody to answer: log it
        case is DeadlineExceededError: return 504
        default: return 503  // shutting down
        }
    } catch {
        return 500
    }
}

// All-of links: work that several waiters share.

/// The upstream call of the recipe: pending until the test fulfills it; its token's handler is
/// kept while the call runs, and rejects the call when the token fires.
final class QuoteService: Sendable {
    private let calls = Mutex<[(promise: Promise<Double>, registration: CancellationRegistration)]>([])

    func fetchQuote(_ symbol: String, cancellationToken: CancellationToken) -> Future<Double> {
        let promise = Promise<Double>()
        let registration = cancellationToken.onCancel {
            promise.reject(cancellationToken.cancellationReason ?? CancellationError())
        }
        calls.withLock { $0.append((promise, registration)) }
        return promise.future
    }

    var callCount: Int { calls.withLock { $0.count } }

    /// The result of the latest call, nil while it runs.
    var lastCallResult: Result<Double, any Error>? { calls.withLock { $0.last?.promise.future.result } }

    /// Forgets every call, so that nothing of a test outlives it in this global.
    func removeAll() { calls.withLock { $0.removeAll() } }

    func fulfillAll(with value: Double) {
        for call in calls.withLock({ $0 }) { call.promise.fulfill(value) }
    }
}

let quoteService = QuoteService()

func fetchQuote(_ symbol: String, cancellationToken: CancellationToken) -> Future<Double> {
    quoteService.fetchQuote(symbol, cancellationToken: cancellationToken)
}

/// Serves every waiter (each with its own token) from one upstream call. A waiter whose token
/// fires gets `CancellationError` at once; the call goes on for the others, and is cancelled
/// when the last waiter's token fires.
func sharedQuote(_ symbol: String, for waiters: [CancellationToken]) -> [Future<Double>] {
    let upstream = CancellationRequest(linkedToAll: waiters)
    let quote = fetchQuote(symbol, cancellationToken: upstream.token)
    return waiters.map { waiter in
        quote.map(on: .synchronous, cancellationToken: waiter) { $0 }
    }
}

func manualClock() -> Bool {
    let clock = ManualClock()
    let request = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
    clock.advance(by: .seconds(29))  // not cancelled
    clock.advance(by: .seconds(1))  // cancelled; its handlers ran inside advance(by:)
    return request.isCancellationRequested
}

func keepTheRegistration() -> CancellationRegistration {
    // Runs when the deadline passes: the registration is kept.
    let registration = CancellationRequest(cancelAfter: .seconds(5)).token.onCancel { print("late") }

    // Never runs: request, token and registration are all dropped, so the timer is stopped at once.
    CancellationRequest(cancelAfter: .seconds(5)).token.onCancel { print("late") }
    return registration
}

// MARK: - Swift task cancellation

func pollUntilCancelled(_ token: CancellationToken) async throws {
    try await withCancellation(token) {
        while true {
            try await Task.sleep(for: .milliseconds(100))  // throws CancellationError once the token is cancelled
        }
    }
}

func sumOfSquaresInTask(upTo n: Int) async throws -> Int {
    try await withTaskCancellationToken { token in
        try sumOfSquares(upTo: n, cancellationToken: token)
    }
}

func cancelTheTask() -> Task<Int, any Error> {
    let task = Task { try await sumOfSquaresInTask(upTo: 100_000_000) }
    task.cancel()  // cancels the token that sumOfSquares(upTo:cancellationToken:) checks
    return task
}

func respond(shutdown: CancellationToken) async throws -> String {
    try await withTaskCancellationToken { taskToken in
        let linked = CancellationRequest(linkedTo: [taskToken, shutdown])
        linked.cancel(after: .seconds(10))
        return try await withCancellation(linked.token) {
            try await Task.sleep(for: .milliseconds(50))  // stands in for real async work
            return "done"
        }
    }
}

/// The DocC bridging article: a deadline for code written for task cancellation.
func sleepUnderDeadline() async throws {
    let request = CancellationRequest(cancelAfter: .milliseconds(20))
    try await withCancellation(request.token) {
        try await Task.sleep(for: .seconds(60))  // throws CancellationError after 20 ms
    }
}

// MARK: - Tests

@Suite struct CancellationGuideExamples {
    @Test func pollingStopsOnceCancelled() throws {
        #expect(theOwnerSide())
        #expect(throws: CancellationError.self) { try sumOfSquares(upTo: 5_000, cancellationToken: .cancelled) }
        #expect(try checksum(of: [[1, 2, 3]]) == 1_026)
    }

    @Test func subscribingAborts() {
        let request = CancellationRequest()
        let download = Download()
        run(download, cancellationToken: request.token)
        request.cancel()
        #expect(download.isAborted)
    }

    @Test func waitingReturnsOnCancel() async {
        // Returns once cancellation is requested, not before.
        let request = CancellationRequest()
        let token = request.token
        let serving = Task {
            await serve(until: token)
            return token.isCancellationRequested
        }
        request.cancel()
        #expect(await serving.value)
        // Already cancelled: returns at once.
        await serve(until: request.token)
        // "Or the task is cancelled": the token stays uncancelled.
        let other = CancellationRequest()
        let otherToken = other.token
        let cancelledTask = Task {
            await serve(until: otherToken)
            return otherToken.isCancellationRequested
        }
        cancelledTask.cancel()
        #expect(await cancelledTask.value == false)
        #expect(otherToken.registrationCount == 0)  // the wait left nothing on the token
    }

    @Test func handlersRunNewestFirst() {
        #expect(newestFirst() == ["registered last, runs first", "registered first, runs last"])
    }

    @Test func unregisteringAndWaiting() async throws {
        #expect(try fetchConfiguration(cancellationToken: .none) == ["mode": "fast"])
        let buffer = Buffer()
        transfer([1, 2], through: buffer, cancellationToken: CancellationRequest().token)
        #expect(buffer.isClosed)
        try await send([1], over: Connection(), cancellationToken: .none)
    }

    @Test func timersAndLinks() async throws {
        #expect(timers().canBeCancelled)
        _ = try await handle(Request())
        #expect(shutdown.token.registrationCount == 0)
        keepTheRegistration().unregister()
        #expect(manualClock())
        try handle(cancellationToken: .none)
        #expect(throws: CancellationError.self) { try handle(cancellationToken: .cancelled) }
    }

    @Test func reasons() async {
        let client = CancellationRequest()
        let shutdown = CancellationRequest()
        #expect(await statusCode(for: Request(), client: client.token, shutdown: shutdown.token) == 200)
        #expect(
            await statusCode(for: Request(), client: client.token, shutdown: shutdown.token, deadline: .zero) == 504
        )
        shutdown.cancel(reason: ShuttingDown())
        #expect(await statusCode(for: Request(), client: client.token, shutdown: shutdown.token) == 503)
        client.cancel(reason: ClientDisconnected())
        #expect(await statusCode(for: Request(), client: client.token, shutdown: .none) == 499)
    }

    @Test func sharedWorkStopsWhenNobodyIsLeft() throws {
        struct Gone: Error {}
        defer { quoteService.removeAll() }
        let waiters = (0..<3).map { _ in CancellationRequest() }
        let before = quoteService.callCount
        let quotes = sharedQuote("ACME", for: waiters.map(\.token))
        #expect(quoteService.callCount == before + 1)  // one upstream call for all of them
        waiters[0].cancel()
        #expect(quotes[0].result.map { (try? $0.get()) == nil } == true)  // abandoned its wait only
        waiters[1].cancel()
        #expect(quotes[2].result == nil)  // the call goes on for the last waiter
        #expect(quoteService.lastCallResult == nil)
        waiters[2].cancel(reason: Gone())
        #expect(throws: Gone.self) { try quoteService.lastCallResult?.get() }  // cancelled, with the last reason
        // The work stopped when nobody was left: each waiter failed with CancellationError.
        for quote in quotes {
            #expect(throws: CancellationError.self) { try quote.result?.get() }
        }

        let served = (0..<2).map { _ in CancellationRequest() }
        let answers = sharedQuote("ACME", for: served.map(\.token))
        served[0].cancel()
        quoteService.fulfillAll(with: 42)
        #expect(try answers[1].result?.get() == 42)  // the others still get the answer
        #expect(throws: CancellationError.self) { try answers[0].result?.get() }
    }

    @Test func bridges() async throws {
        // Each in a task of its own: `withCancellation` leaves its task cancelled.
        await #expect(throws: CancellationError.self) {
            try await Task { try await pollUntilCancelled(.cancelled) }.value
        }
        await #expect(throws: CancellationError.self) { try await Task { try await sleepUnderDeadline() }.value }
        #expect(try await sumOfSquaresInTask(upTo: 10) == 385)
        do {
            _ = try await cancelTheTask().value  // only if the task finished before cancel() reached it
        } catch {
            #expect(error is CancellationError)
        }
        #expect(try await respond(shutdown: .none) == "done")
    }
}
