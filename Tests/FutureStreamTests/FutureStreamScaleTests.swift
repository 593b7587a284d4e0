import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// Many subscribers of one stream leaving by their tokens, as a server's clients disconnect from
/// one broadcast stream: each leaves in O(1) by construction (the subscriber knows its slot,
/// `Slots`; `CallgrindDriver stream-unsubscribe-<N>` measures it), and the ones left still get
/// every value, once, in registration order. Nothing asserts on time.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(5))))
struct FutureStreamScaleTests {
    /// 10⁵ subscribers under `make stress`, a tenth of it in `make test`.
    static let subscribers = Stress.override == nil ? Scale.hundredThousand / 10 : Scale.hundredThousand

    /// Who got which value: the subscriber's index and the value, in the order of delivery.
    struct Delivery: Equatable, Sendable {
        let subscriber: Int
        let value: Int
    }

    @Test(arguments: CancelOrder.allCases)
    func `subscribers unsubscribed by their tokens get nothing more; the others get every value, in order`(
        order: CancelOrder
    ) async {
        let count = Self.subscribers
        // Every tenth survives; the others are cancelled, half of them before value 1 and half after.
        var victims = (0..<count).filter { $0 % 10 != 0 }
        switch order {
        case .registration: break
        case .reverse: victims.reverse()
        case .random:
            var random = SplitMix64(seed: 27)  // the same order on every run
            for index in victims.indices.dropFirst().reversed() { victims.swapAt(index, random.below(index + 1)) }
        }
        let early = Set(victims.prefix(victims.count / 2))
        let (deliveries, left, releasedOnCancel, cancellations) = await onHeavyThread {
            [victims] () -> ([Delivery], Int, Int, Int) in
            let promise = StreamPromise<Int>(capacity: 0)
            let counter = DeinitCounter()
            let deliveries = Locked<[Delivery]>([])
            let cancellations = Counter()
            func subscribe(_ index: Int, token: CancellationToken) {
                let tracked = counter.make()  // released with the handler
                promise.stream.onComplete(on: .synchronous, cancellationToken: token) { result in
                    tracked.touch()
                    switch result {
                    case .success(let value):
                        deliveries.withLock { $0.append(Delivery(subscriber: index, value: value)) }
                    case .failure: cancellations.increment()
                    }
                }
            }
            let requests = (0..<count).map { _ in CancellationRequest() }
            for index in 0..<count { subscribe(index, token: requests[index].token) }
            promise.fulfill(0)
            for index in victims.prefix(victims.count / 2) { requests[index].cancel() }
            promise.fulfill(1)
            for index in victims.dropFirst(victims.count / 2) { requests[index].cancel() }
            let releasedOnCancel = counter.deallocated
            // Subscribed after the cancellations: they get the values after the survivors.
            for index in count..<(count + 10) { subscribe(index, token: CancellationRequest().token) }
            let left = promise.stream.subscriberCount
            promise.fulfill(2)
            promise.fulfill(3)
            return (deliveries.value, left, releasedOnCancel, cancellations.value)
        }
        let survivors = (0..<count).filter { $0 % 10 == 0 }
        let expected =
            (0..<count).map { Delivery(subscriber: $0, value: 0) }
            + (0..<count).filter { !early.contains($0) }.map { Delivery(subscriber: $0, value: 1) }
            + [2, 3].flatMap { value in
                (survivors + (count..<(count + 10))).map { Delivery(subscriber: $0, value: value) }
            }
        // Once each, in registration order; nothing after a cancel. (Not `==`: a failure would print 10⁴ entries.)
        #expect(deliveries.count == expected.count)
        let firstWrong = zip(deliveries, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(firstWrong == nil, "first wrong delivery: \(String(describing: firstWrong))")
        #expect(left == survivors.count + 10)
        #expect(releasedOnCancel == victims.count)  // released when cancelled
        #expect(cancellations == victims.count)  // one CancellationError each
    }
}
