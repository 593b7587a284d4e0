import Foundation
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// Scale and depth: many registrations, timers and tasks at once all complete and release what
/// they hold. Sizes come from `Scale` (smaller under the sanitizers). Nothing asserts on time;
/// the peak memory of a release run is reported in `Documentation/Performance.md`.
///
/// The million-link `map` and `flatMap` chains are in `Future+MapTests.swift`, the
/// million-future completion chains in `FutureTests.swift`.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(5))))
struct ScaleTests {
    /// The timer tests' size: 10⁵ under `make stress`, a tenth of it in `make test`. A hundred
    /// thousand timers firing at once queue ahead of every other timer in the process for
    /// seconds on 2 loaded cores, and `make test` runs the timer tests of other suites beside them.
    static let timers = Stress.override == nil ? Scale.hundredThousand / 10 : Scale.hundredThousand

    /// The continuations test's size: 10⁵ under `make stress`, a tenth of it in `make test`.
    static let continuations = Stress.override == nil ? Scale.hundredThousand / 10 : Scale.hundredThousand

    @Test(arguments: CancelOrder.allCases)
    func `continuations removed by their tokens from one pending future never run; the others run once, in order`(
        order: CancelOrder
    ) async {
        let count = Self.continuations
        let (ran, waitingBefore, releasedOnCancel, releasedOnCompletion) = await onHeavyThread {
            () -> ([Int], String, Int, Int) in
            let promise = Promise<Int>()
            let counter = DeinitCounter()
            let ran = Locked<[Int]>([])
            func register(_ index: Int, token: CancellationToken) {
                let tracked = counter.make()  // released with the continuation
                promise.future.onSuccess(on: .synchronous, cancellationToken: token) { _ in
                    tracked.touch()
                    ran.withLock { $0.append(index) }
                }
            }
            let requests = (0..<count).map { _ in CancellationRequest() }
            for index in 0..<count { register(index, token: requests[index].token) }
            // Every tenth survives; the others are cancelled.
            var victims = (0..<count).filter { $0 % 10 != 0 }
            switch order {
            case .registration: break
            case .reverse: victims.reverse()
            case .random: victims.shuffle()
            }
            for index in victims { requests[index].cancel() }
            let releasedOnCancel = counter.deallocated
            // Registered after the cancellations: they run after the survivors.
            for index in count..<(count + 10) { register(index, token: CancellationRequest().token) }
            let waitingBefore = promise.future.debugDescription
            promise.fulfill(1)
            return (ran.value, waitingBefore, releasedOnCancel, counter.deallocated)
        }
        let survivors = (0..<count).filter { $0 % 10 == 0 } + (count..<(count + 10))
        #expect(ran == survivors)  // once each, in registration order; no cancelled one
        #expect(waitingBefore.contains("\(survivors.count) continuations waiting"))
        #expect(releasedOnCancel == count - count / 10)  // released when cancelled, not at completion
        #expect(releasedOnCompletion == count + 10)
    }

    @Test func `a million registrations on one token all run exactly once on cancel`() async {
        let (runs, released) = await onHeavyThread { () -> (Int, Int) in
            let request = CancellationRequest()
            let runs = Counter()
            let counter = DeinitCounter()
            let tracked = counter.make()  // one object captured by every handler
            for _ in 0..<Scale.million {
                request.token.onCancel {
                    tracked.touch()
                    runs.increment()
                }
            }
            _ = consume tracked
            request.cancel()
            return (runs.value, counter.deallocated)
        }
        #expect(runs == Scale.million)
        #expect(released == 1)  // every handler closure was released after it ran
    }

    @Test func `a hundred thousand timers armed and then disposed release their requests`() async {
        let alive = await onDedicatedThread { () -> [WeakProbe<CancellationRequest>] in
            var probes: [WeakProbe<CancellationRequest>] = []
            for index in 0..<Self.timers {
                let request = CancellationRequest(cancelAfter: .seconds(3600))
                if index % 100 == 0 { probes.append(WeakProbe(request)) }
                request.cancel()  // disposes the pending timer, which held the request
            }
            return probes
        }
        #expect(await eventually { alive.allSatisfy { !$0.isAlive } })
    }

    @Test func `a hundred thousand timers all fire`() async {
        let runs = Counter()
        let registrations = await onDedicatedThread {
            (0..<Self.timers).map { _ in
                // The request is dropped at once: its pending timer keeps it cancellable while the
                // registration can observe it.
                CancellationRequest(cancelAfter: .microseconds(100)).token.onCancel { runs.increment() }
            }
        }
        #expect(await eventually { runs.value == Self.timers })
        withExtendedLifetime(registrations) {}
    }

    @Test func `ten thousand async futures on one token all end cancelled`() async throws {
        let request = CancellationRequest()
        let started = Counter()
        let futures = (0..<Scale.tenThousand).map { _ in
            Future(cancellationToken: request.token) { () async throws -> Int in
                started.increment()
                try await Task.sleep(for: .seconds(3600))
                return 1
            }
        }
        #expect(await eventually { started.value == Scale.tenThousand })
        request.cancel()
        let results = try await futures.results().value()
        #expect(results.count == Scale.tenThousand)
        #expect(results.allSatisfy { $0.isCancellation })
    }
}
