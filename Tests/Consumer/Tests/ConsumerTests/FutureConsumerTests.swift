import Dispatch
import FutureLib
import Testing

/// The `FutureLib` product raced from many threads and tasks, as a user's code would.
@Suite(.timeLimit(.minutes(Load.minutes(2))))
struct FutureConsumerTests {
    static let rounds = 200

    struct Failure: Error {}

    @Test func `a promise fulfilled on one thread is observed with its payload on others`() async throws {
        let queue = DispatchQueue(label: "consumer.serial")
        for _ in 0..<Self.rounds {
            let promise = Promise<Payload>()
            let seen = Counter()
            await onThreads(3) { index in
                switch index {
                case 0:
                    let payload = Payload()
                    payload.value = 5
                    promise.fulfill(payload)
                case 1: promise.future.onSuccess { if $0.value == 5 { seen.increment() } }
                default: promise.future.onSuccess(on: queue) { if $0.value == 5 { seen.increment() } }
                }
            }
            #expect(await eventually { seen.value == 2 })
        }
    }

    @Test func `concurrent fulfil and reject: exactly one wins and every observer sees it`() async throws {
        for _ in 0..<Self.rounds {
            let promise = Promise<Int>()
            let wins = Counter()
            await onThreads(3) { index in
                let won = index == 0 ? promise.tryReject(Failure()) : promise.tryFulfill(index)
                if won { wins.increment() }
            }
            #expect(wins.value == 1)
            let first = promise.future.result.map { try? $0.get() }
            let second = try? await promise.future.value()
            #expect(first == second)
        }
    }

    @Test func `blocking value() on threads returns what another thread fulfilled`() async {
        for _ in 0..<50 {
            let promise = Promise<Payload>()
            let seen = Counter()
            await onThreads(3) { index in
                if index == 0 {
                    let payload = Payload()
                    payload.value = 9
                    promise.fulfill(payload)
                } else if (try? promise.future.value(timeout: Load.timeout(.seconds(60))))?.value == 9 {
                    seen.increment()
                }
            }
            #expect(seen.value == 2)
        }
    }

    @Test func `value() from many tasks while a thread fulfils`() async throws {
        let promises = (0..<100).map { _ in Promise<Int>() }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for (index, promise) in promises.enumerated() {
                group.addTask { try await promise.future.value() - index }
            }
            DispatchQueue.global().async {
                for (index, promise) in promises.enumerated() { promise.fulfill(index) }
            }
            for try await difference in group { #expect(difference == 0) }
        }
    }

    @Test func `map and flatMap chains on default and queues, fulfilled on another thread`() async throws {
        let queue = DispatchQueue(label: "consumer.chain")
        for _ in 0..<Self.rounds {
            let promise = Promise<Int>()
            let chain = promise.future
                .map { $0 + 1 }
                .map(on: queue) { $0 * 2 }
                .flatMap { value in Future(on: .default) { value + 1 } }
                .flatMap(on: queue) { value in Future(value: value * 10) }
                .recover { _ in -1 }
            DispatchQueue.global().async { promise.fulfill(1) }
            #expect(try await chain.value() == 50)
        }
    }

    @Test func `continuations registered from many threads on a serial queue all run once`() async {
        let queue = DispatchQueue(label: "consumer.continuations")
        let promise = Promise<Int>()
        let ran = Counter()
        await onThreads(4) { index in
            for _ in 0..<100 {
                promise.future.onSuccess(on: queue) { _ in ran.increment() }
                _ = promise.future.map(on: queue) { $0 + index }
            }
            if index == 0 { promise.fulfill(1) }
        }
        #expect(await eventually { ran.value == 400 })
    }

    @Test func `continuation tokens cancelled while the future completes: each runs at most once`() async {
        for _ in 0..<Self.rounds {
            let promise = Promise<Int>()
            let request = CancellationRequest()
            let calls = Counter()
            promise.future.onComplete(cancellationToken: request.token) { _ in calls.increment() }
            let mapped = promise.future.map(on: .synchronous, cancellationToken: request.token) { $0 + 1 }
            await onThreads(2) { index in
                if index == 0 { promise.fulfill(1) } else { request.cancel() }
            }
            #expect(await eventually { calls.value == 1 })
            let result = try? await mapped.value()
            #expect(result == nil || result == 2)
        }
    }

    @Test func `Future work on default with a token cancelled from another thread`() async {
        for _ in 0..<Self.rounds {
            let request = CancellationRequest()
            let payload = Payload()
            let future = Future(cancellationToken: request.token) { () -> Int in
                payload.value = 1
                return 1
            }
            DispatchQueue.global().async { request.cancel() }
            let value = try? await future.value()
            #expect(value == nil || value == 1)
        }
    }

    @Test func `async Future work cancelled by a token from another thread`() async {
        let request = CancellationRequest()
        let futures = (0..<20).map { _ in
            Future(cancellationToken: request.token) { () async throws -> Int in
                try await Task.sleep(for: .seconds(60))
                return 1
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) { request.cancel() }
        for future in futures {
            await #expect(throws: CancellationError.self) { try await future.value() }
        }
    }

    @Test func `zip, sequence and traverse of futures completed on many threads`() async throws {
        let promises = (0..<40).map { _ in Promise<Int>() }
        let all = promises.map(\.future).sequence()
        let pair = zip(promises[0].future, promises[1].future)
        let doubled = (0..<40).traverse(maxConcurrency: 4) { index in promises[index].future.map { $0 * 2 } }
        await onThreads(4) { index in
            for (offset, promise) in promises.enumerated() where offset % 4 == index { promise.fulfill(offset) }
        }
        #expect(try await all.value() == Array(0..<40))
        #expect(try await pair.value() == (0, 1))
        #expect(try await doubled.value() == (0..<40).map { $0 * 2 })
    }

    @Test func `timeout racing fulfil: the result is the value or a timeout, never both`() async {
        for round in 0..<Self.rounds {
            let promise = Promise<Int>()
            let limited = promise.future.timeout(after: .microseconds(round % 20 * 10))
            DispatchQueue.global().async { promise.fulfill(1) }
            do {
                #expect(try await limited.value() == 1)
            } catch {
                #expect(error as? FutureError == .timeout)
            }
        }
    }

    @Test func `a promise dropped on another thread breaks its future`() async {
        let futures = await withTaskGroup(of: Future<Int>.self) { group in
            for _ in 0..<50 {
                group.addTask { Promise<Int>().future }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for future in futures {
            await #expect(throws: FutureError.brokenPromise) { try await future.value() }
        }
    }

    @Test func `a limited context runs jobs from many threads, at most its limit at once`() async {
        let limited = LimitedExecutionContext(maxConcurrency: 2)
        let running = Counter()
        let peak = Counter()
        let done = Counter()
        await onThreads(3) { _ in
            for _ in 0..<100 {
                limited.execute {
                    let now = running.increment()
                    if now > 2 { peak.increment() }
                    _ = running.decrement()
                    done.increment()
                }
            }
        }
        #expect(await eventually { done.value == 300 })
        #expect(peak.value == 0)
    }
}
