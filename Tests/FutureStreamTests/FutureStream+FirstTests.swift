import Cancellation
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamFirstTests {
    @Test func `completes with the first value and ignores the later ones`() async throws {
        let promise = StreamPromise<Int>()
        let first = promise.stream.first()
        #expect(!first.isCompleted)
        promise.fulfill(1)
        promise.fulfill(2)
        #expect(first.result?.successValue == 1)
        #expect(try await first.value() == 1)
    }

    @Test func `a failure first fails the future with it`() {
        let promise = StreamPromise<Int>()
        let first = promise.stream.first()
        promise.reject(TestFailure(code: 3))
        promise.fulfill(4)
        #expect(first.result?.testFailure == TestFailure(code: 3))
    }

    @Test func `the oldest kept result comes first`() {
        let promise = StreamPromise<Int>(capacity: 2)
        promise.fulfill(1)
        promise.fulfill(2)
        promise.fulfill(3)  // evicts 1
        #expect(promise.stream.first().result?.successValue == 2)
    }

    @Test func `a stream that finishes empty fails it with noSuchElement`() {
        let promise = StreamPromise<Int>()
        let first = promise.stream.first()
        promise.finish()
        #expect(first.result?.futureError == .noSuchElement)
        // Already finished before `first()`: at once.
        #expect(promise.stream.first().result?.futureError == .noSuchElement)
    }

    @Test func `a dropped promise finishes the stream, and the future fails with noSuchElement`() {
        var promise: StreamPromise<Int>? = StreamPromise<Int>()
        let first = promise!.stream.first()
        promise = nil
        #expect(first.result?.futureError == .noSuchElement)
    }

    @Test func `the token cancelled first fails it with CancellationError and unsubscribes`() {
        let promise = StreamPromise<Int>()
        let request = CancellationRequest()
        let first = promise.stream.first(cancellationToken: request.token)
        #expect(promise.stream.subscriberCount == 1)
        request.cancel()
        #expect(first.result?.isCancellation == true)
        #expect(promise.stream.subscriberCount == 0)
        promise.fulfill(1)
        #expect(first.result?.isCancellation == true)
    }

    @Test func `an already cancelled token fails it before it returns, without subscribing`() {
        let promise = StreamPromise<Int>(capacity: 1)
        promise.fulfill(1)
        let request = CancellationRequest()
        request.cancel()
        let first = promise.stream.first(cancellationToken: request.token)
        #expect(first.result?.isCancellation == true)
        #expect(promise.stream.subscriberCount == 0)
    }

    @Test func `the token after the first value changes nothing`() {
        let promise = StreamPromise<Int>()
        let request = CancellationRequest()
        let first = promise.stream.first(cancellationToken: request.token)
        promise.fulfill(5)
        request.cancel()
        #expect(first.result?.successValue == 5)
    }

    // MARK: - Lifetime

    @Test func `once decided it keeps nothing subscribed and no handler on the token`() {
        let request = CancellationRequest()
        for decide in 0..<3 {
            let promise = StreamPromise<Int>()
            let first = promise.stream.first(cancellationToken: request.token)
            #expect(promise.stream.subscriberCount == 1)
            #expect(request.token.registrationCount == 1)
            switch decide {
            case 0: promise.fulfill(1)
            case 1: promise.reject(TestFailure(code: 1))
            default: promise.finish()
            }
            #expect(first.isCompleted)
            #expect(promise.stream.subscriberCount == 0)
            #expect(request.token.registrationCount == 0)
        }
    }

    @Test
    func `once decided the stream holds the future no more: it and its value are released with the caller's reference`()
    {
        let counter = DeinitCounter()
        let promise = StreamPromise<Tracked>(capacity: 0)
        let probe: WeakProbe<Future<Tracked>>
        do {
            let first = promise.stream.first()
            probe = WeakProbe(first)
            promise.fulfill(counter.make())
            #expect(first.isCompleted)
        }
        #expect(!probe.isAlive)
        #expect(counter.deallocated == 1)  // the value the future held, released with it
        #expect(promise.stream.subscriberCount == 0)
    }
}

/// `first()` racing the stream's first value and its token, from other threads.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureStreamFirstRaceTests {
    final class Round: Sendable {
        let promise = StreamPromise<Int>(capacity: 0)
        let request = CancellationRequest()
        let first = Locked<Future<Int>?>(nil)
    }

    @Test func `first() racing the first value gets that value or the next one, and unsubscribes`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { Round() },
            actions: [
                { @Sendable round in round.first.withLock { $0 = round.promise.stream.first() } },
                { @Sendable round in round.promise.fulfill(1) },
            ],
            check: { round in
                let first = round.first.value!
                // Subscribed after the value (capacity 0): it takes the next one.
                round.promise.fulfill(2)
                guard let value = first.result?.successValue, value == 1 || value == 2 else {
                    return "first() gave \(String(describing: first.result))"
                }
                return round.promise.stream.subscriberCount == 0 ? nil : "still subscribed"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `the first value racing the token decides once, and nothing is left behind`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { () -> Round in
                let round = Round()
                round.first.withLock { $0 = round.promise.stream.first(cancellationToken: round.request.token) }
                return round
            },
            actions: [
                { @Sendable round in round.promise.fulfill(1) },
                { @Sendable round in round.request.cancel() },
            ],
            check: { round in
                let first = round.first.value!
                switch first.result {
                case .success(1)?: break
                case .failure(let error)? where error is CancellationError: break
                default: return "first() gave \(String(describing: first.result))"
                }
                guard round.promise.stream.subscriberCount == 0 else { return "still subscribed" }
                return round.request.token.registrationCount == 0 ? nil : "a handler left on the token"
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func `the stream finishing races the first value: the value or noSuchElement`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { () -> Round in
                let round = Round()
                round.first.withLock { $0 = round.promise.stream.first() }
                return round
            },
            actions: [
                { @Sendable round in round.promise.fulfill(1) },
                { @Sendable round in round.promise.finish() },
            ],
            check: { round in
                let first = round.first.value!
                switch first.result {
                case .success(1)?: return nil
                case .failure(let error)? where error as? FutureError == .noSuchElement: return nil
                default: return "first() gave \(String(describing: first.result))"
                }
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }
}
