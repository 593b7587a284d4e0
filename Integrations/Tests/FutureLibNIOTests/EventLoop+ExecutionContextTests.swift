import FutureLib
import FutureLibNIO
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(2)))
struct EventLoopExecutionContextTests {
    @Test("execute runs the work once, later, on the loop's thread")
    func executeRunsOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let onLoop = try await withCheckedThrowingContinuation { continuation in
            EventLoopExecutionContext(loop).execute { continuation.resume(returning: loop.inEventLoop) }
        }
        #expect(onLoop)
        try await group.shutdownGracefully()
    }

    @Test("continuations on .eventLoop run exactly once each, on the loop, in registration order")
    func continuationsRunOnTheLoopInOrder() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loop = group.next()
        let promise = Promise<Int>()
        let seen = NIOLockedValueBox<[Int]>([])
        let offLoop = Atomic(0)
        let done = Promise<Void>()
        let count = 100
        for index in 0..<count {
            promise.future.onSuccess(on: .eventLoop(loop)) { value in
                if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
                let all = seen.withLockedValue {
                    $0.append(index + value)
                    return $0.count
                }
                if all == count { done.fulfill(()) }
            }
        }
        promise.fulfill(0)
        try await done.future.value()
        #expect(offLoop.load(ordering: .relaxed) == 0)
        #expect(seen.withLockedValue { $0 } == Array(0..<count))
        try await group.shutdownGracefully()
    }

    @Test("a map on .eventLoop runs its closure on the loop")
    func mapRunsOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let onLoop = try await Future(value: 1).map(on: .eventLoop(loop)) { _ in loop.inEventLoop }.value()
        #expect(onLoop)
        try await group.shutdownGracefully()
    }
}
