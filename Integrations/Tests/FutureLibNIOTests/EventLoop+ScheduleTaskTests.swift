import FutureLib
import FutureLibNIO
import NIOCore
import NIOPosix
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(3)))
struct EventLoopScheduleTaskTests {
    @Test("the task runs once, on the loop, and completes the future with its result")
    func taskRunsOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let runs = Atomic(0)
        let future = loop.scheduleTask(in: .milliseconds(1), cancellationToken: CancellationRequest().token) {
            runs.add(1, ordering: .relaxed)
            return loop.inEventLoop
        }
        #expect(try await future.value())
        try await loop.submit {}.get()
        #expect(runs.load(ordering: .relaxed) == 1)
        let byDeadline = loop.scheduleTask(deadline: .now(), cancellationToken: .none) { 4 }
        #expect(try await byDeadline.value() == 4)
        try await group.shutdownGracefully()
    }

    @Test("a token cancelled before the deadline fails the future at once and the task never runs")
    func tokenCancelsTheScheduledTask() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let ran = Atomic(false)
        let request = CancellationRequest()
        let future = loop.scheduleTask(in: .milliseconds(50), cancellationToken: request.token) {
            ran.store(true, ordering: .relaxed)
        }
        request.cancel()
        #expect(future.isCompleted)
        await #expect(throws: CancellationError.self) { try await future.value() }
        // The loop runs scheduled tasks in deadline order: once a later one ran, the cancelled one would have too.
        try await loop.scheduleTask(in: .milliseconds(100)) {}.futureResult.get()
        #expect(ran.load(ordering: .relaxed) == false)
        let skipped = loop.scheduleTask(in: .zero, cancellationToken: .cancelled) {
            ran.store(true, ordering: .relaxed)
        }
        await #expect(throws: CancellationError.self) { try await skipped.value() }
        try await loop.scheduleTask(in: .milliseconds(10)) {}.futureResult.get()
        #expect(ran.load(ordering: .relaxed) == false)
        try await group.shutdownGracefully()
    }

    @Test("racing the deadline and cancellation: CancellationError exactly when the task never ran")
    func raceCancellationMeansNeverRan() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        for _ in 0..<2000 {
            let loop = group.next()
            let runs = Atomic(0)
            let request = CancellationRequest()
            let future = loop.scheduleTask(in: .zero, cancellationToken: request.token) { () -> Void in
                runs.add(1, ordering: .relaxed)
            }
            request.cancel()
            let result: Result<Void, any Error>
            do { result = .success(try await future.value()) } catch { result = .failure(error) }
            try await loop.submit {}.get()  // a task that won the race has finished by now
            switch result {
            case .success: #expect(runs.load(ordering: .relaxed) == 1)
            case .failure(let error):
                #expect(error is CancellationError)
                #expect(runs.load(ordering: .relaxed) == 0)
            }
        }
        try await group.shutdownGracefully()
    }

    @Test("a loop that shuts down first drops the task: the future fails with brokenPromise")
    func loopShutdownBreaksThePromise() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let future = group.next().scheduleTask(in: .seconds(600), cancellationToken: CancellationRequest().token) {
            1
        }
        try await group.shutdownGracefully()
        await #expect(throws: FutureError.brokenPromise) { try await future.value() }
    }

    @Test("the task ran: the token's handler is unregistered, so a long-lived token keeps nothing of it")
    func handlerReleasedWhenTheTaskRuns() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let shutdown = CancellationRequest()  // outlives the task, as a server's token does
        weak var result: Payload?
        do {
            let future = loop.scheduleTask(in: .zero, cancellationToken: shutdown.token) { Payload() }
            result = try await future.value()
            #expect(result != nil)
        }
        try await loop.submit {}.get()  // the loop has finished with the task
        // A handler still on the token would hold the promise, and through it the result.
        #expect(result == nil)
        shutdown.cancel()
        try await group.shutdownGracefully()
    }

    @Test("the task's error fails the future")
    func taskErrorFailsTheFuture() async throws {
        struct Broken: Error {}
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let future = group.next().scheduleTask(in: .zero, cancellationToken: .none) { () throws -> Int in
            throw Broken()
        }
        await #expect(throws: Broken.self) { try await future.value() }
        try await group.shutdownGracefully()
    }
}

/// A result whose release shows that nothing holds the completed future any more.
private final class Payload: Sendable {}
