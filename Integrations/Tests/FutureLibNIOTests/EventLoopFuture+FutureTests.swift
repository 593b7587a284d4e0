import FutureLib
import FutureLibNIO
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// Thrown by the tests as a failure that is not a cancellation.
private struct Failure: Error, Equatable {}

@Suite(.timeLimit(.minutes(3)))
struct EventLoopFutureBridgeTests {
    @Test("EventLoopFuture to Future: the success and the failure come across")
    func eventLoopFutureResultComesAcross() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        #expect(try await loop.makeSucceededFuture(7).future().value() == 7)
        await #expect(throws: Failure.self) {
            try await Future<Int>(loop.makeFailedFuture(Failure())).value()
        }
        try await group.shutdownGracefully()
    }

    @Test("EventLoopFuture to Future: a token cancelled first fails the future with CancellationError at once")
    func tokenCancelsTheWaiting() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let nio = loop.makePromise(of: Int.self)
        let request = CancellationRequest()
        let future = nio.futureResult.future(cancellationToken: request.token)
        #expect(!future.isCompleted)
        request.cancel()
        #expect(future.isCompleted)  // on the cancelling thread, before cancel() returned
        nio.succeed(1)  // too late: ignored
        await #expect(throws: CancellationError.self) { try await future.value() }
        let already = loop.makeSucceededFuture(1).future(cancellationToken: .cancelled)
        await #expect(throws: CancellationError.self) { try await already.value() }
        try await group.shutdownGracefully()
    }

    @Test("EventLoopFuture to Future: once it completes, a long-lived token keeps nothing of the future")
    func handlerReleasedWhenTheEventLoopFutureCompletes() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let shutdown = CancellationRequest()  // outlives the future, as a server's token does
        weak var result: Payload?
        do {
            let nio = loop.makePromise(of: Payload.self)
            let future = Future(nio.futureResult, cancellationToken: shutdown.token)
            nio.succeed(Payload())
            result = try await future.value()
            #expect(result != nil)
        }
        try await loop.submit {}.get()  // the loop has finished running the NIO future's callbacks
        // A handler still on the token would hold the future, and through it the result.
        #expect(result == nil)
        shutdown.cancel()
        try await group.shutdownGracefully()
    }

    @Test("EventLoopFuture to Future: racing the loop's result and cancellation, the future completes exactly once")
    func raceCompletesExactlyOnce() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        for _ in 0..<1000 {
            let loop = group.next()
            let nio = loop.makePromise(of: Int.self)
            let request = CancellationRequest()
            let future = Future(nio.futureResult, cancellationToken: request.token)
            let calls = Atomic(0)
            let observed = Promise<Result<Int, any Error>>()
            future.onComplete(on: .synchronous) { result in
                calls.add(1, ordering: .relaxed)
                observed.fulfill(result)
            }
            loop.execute { nio.succeed(5) }
            request.cancel()
            switch try await observed.future.value() {
            case .success(let value): #expect(value == 5)
            case .failure(let error): #expect(error is CancellationError)
            }
            // A second completion would have run the synchronous continuation again by now: the loop is done.
            try await loop.submit {}.get()
            #expect(calls.load(ordering: .relaxed) == 1)
        }
        try await group.shutdownGracefully()
    }

    @Test("Future to EventLoopFuture: completes once, on the given loop, with the future's result")
    func futureToEventLoopFutureOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loop = group.next()
        let promise = Promise<Int>()
        let nio = promise.future.eventLoopFuture(on: loop)
        #expect(nio.eventLoop === loop)
        let onLoop = nio.map { ($0, loop.inEventLoop) }
        promise.fulfill(3)
        let (value, wasOnLoop) = try await onLoop.get()
        #expect(value == 3)
        #expect(wasOnLoop)
        await #expect(throws: Failure.self) {
            try await Future<Int>(error: Failure()).eventLoopFuture(on: loop).get()
        }
        try await group.shutdownGracefully()
    }

    @Test("Future to EventLoopFuture: a cancelled token fails it with CancellationError, even over a value")
    func futureToEventLoopFutureCancelled() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        await #expect(throws: CancellationError.self) {
            try await Future(value: 1).eventLoopFuture(on: loop, cancellationToken: .cancelled).get()
        }
        let request = CancellationRequest()
        let pending = Promise<Int>()
        let nio = pending.future.eventLoopFuture(on: loop, cancellationToken: request.token)
        let failedOnLoop = nio.flatMapErrorThrowing { error in
            #expect(loop.inEventLoop)
            throw error
        }
        request.cancel()
        await #expect(throws: CancellationError.self) { try await failedOnLoop.get() }
        pending.fulfill(1)  // the source is not completed by the cancellation, and its late value is ignored
        try await group.shutdownGracefully()
    }
}

/// A result whose release shows that nothing holds the completed future any more.
private final class Payload: Sendable {}
