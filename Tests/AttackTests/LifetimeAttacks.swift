import Cancellation
import Foundation
import FutureLib
import TestCombinators
import Testing

// Nothing unobservable kept: a stream stage that nobody holds and nobody subscribes to is
// released, its closure and captures with it, while its source lives on; a stage that something
// subscribes to lives as long as that subscription. A derived future made per request on a
// long-lived pending future follows the documented rule instead: kept until the future completes.

enum Lifetimes {
    /// How many stages or derived futures the memory loops make: 10⁶ under `make stress`.
    static let loop = AttackSize.isStress ? 1_000_000 : AttackSize.isSanitized ? 10_000 : 20_000

    /// Makes and drops `loop` `map` stages on one long-lived stream; prints the resident set
    /// before and after and fails when a stage or its closure was kept.
    static func droppedStreamMaps() {
        let promise = StreamPromise<[UInt8]>(capacity: 1)
        promise.fulfill([1])
        let counter = ReleaseCounter()
        let before = residentBytes() ?? 0
        for _ in 0..<loop {
            let probe = counter.make()
            let payload = [UInt8](repeating: 0, count: 64)  // a capture of some size, as a request's
            _ = promise.stream.map(on: .synchronous) { value in
                probe.touch()
                return value + payload
            }
        }
        promise.fulfill([2])
        let after = residentBytes() ?? 0
        print("dropped stream maps: \(loop), resident set \(before / 1024) KB -> \(after / 1024) KB")
        guard counter.released == loop else { fatalError("\(loop - counter.released) dropped stages were kept") }
        withExtendedLifetime(promise) {}
    }

    /// Makes `loop` `map`s on one pending future and drops them; prints the resident set
    /// before, while they wait, and after the future completed.
    static func droppedFutureMaps() {
        let promise = Promise<Int>()
        let counter = ReleaseCounter()
        let before = residentBytes() ?? 0
        for _ in 0..<loop {
            let probe = counter.make()
            _ = promise.future.map(on: .synchronous) { value in
                probe.touch()
                return value
            }
        }
        let waiting = residentBytes() ?? 0
        let keptWhilePending = loop - counter.released
        promise.fulfill(1)
        let after = residentBytes() ?? 0
        print(
            "dropped future maps: \(loop), resident set \(before / 1024) KB -> \(waiting / 1024) KB pending"
                + " -> \(after / 1024) KB completed"
        )
        guard keptWhilePending == loop, counter.released == loop else {
            fatalError("kept while pending: \(keptWhilePending), released at completion: \(counter.released)")
        }
    }
}

extension Lifetimes {
    /// Makes `loop` chains of two `map`s on futures that never complete (a wrapped callback API
    /// that dropped its callback), each with the token of a request of its own, and drops each
    /// request uncancelled; prints the resident set before and after, and fails when a chain or
    /// its closure was kept.
    static func chainsWithDroppedRequests() {
        let counter = ReleaseCounter()
        let before = residentBytes() ?? 0
        for _ in 0..<loop {
            let probe = counter.make()
            let payload = [UInt8](repeating: 0, count: 64)  // a capture of some size, as a request's
            let request = CancellationRequest()
            _ = Future<Int>(on: DroppingContext()) { 0 }
                .map(on: .synchronous, cancellationToken: request.token) { value in
                    probe.touch()
                    return value + payload.count
                }
                .map(on: .synchronous, cancellationToken: request.token) { $0 + 1 }
        }
        let after = residentBytes() ?? 0
        print("chains with dropped requests: \(loop), resident set \(before / 1024) KB -> \(after / 1024) KB")
        guard counter.released == loop else { fatalError("\(loop - counter.released) chains were kept") }
    }
}

/// A combinator over several inputs, one of which never completes (a wrapped callback API that
/// dropped its callback) and is held by nothing but the combinator. Its other inputs completed,
/// carrying a value of some size, where a completed input leaves the result pending; for
/// `firstCompleted` and `race`, which a completed input would decide, they never complete either.
/// Each is followed by a `map` whose closure captures the probe (for `fold`, its own closure does):
/// what only the completion of the result would run.
enum GatheringCombinator: String, CaseIterable, Codable, Sendable {
    case zipOfTwo, zipOfThree, sequence, fold, results, traverse, firstCompleted, firstSuccess, race

    func apply(token: CancellationToken, capturing probe: Probe) -> Future<Int> {
        let never = Future<Int>(on: DroppingContext()) { 0 }
        let payload = [UInt8](repeating: 0, count: 64)  // a completed input's value, of some size
        switch self {
        case .zipOfTwo:
            return never.zip(Future(value: payload), on: .synchronous, cancellationToken: token)
                .map(on: .synchronous) { value, bytes in
                    probe.touch()
                    return value + bytes.count
                }
        case .zipOfThree:
            return zip(never, Future(value: payload), Future(value: 1), on: .synchronous, cancellationToken: token)
                .map(on: .synchronous) { value, bytes, one in
                    probe.touch()
                    return value + bytes.count + one
                }
        case .sequence:
            return [never, Future(value: payload.count)].sequence(cancellationToken: token)
                .map(on: .synchronous) { values in
                    probe.touch()
                    return values[0]
                }
        case .fold:
            return [never, Future(value: payload.count)].fold(
                on: .synchronous,
                cancellationToken: token,
                initial: 0
            ) { total, value in
                probe.touch()
                return total + value
            }
        case .results:
            return [never, Future(value: payload.count)].results(cancellationToken: token)
                .map(on: .synchronous) { results in
                    probe.touch()
                    return try results[0].get()
                }
        case .traverse:
            return [0, 1].traverse(on: .synchronous, cancellationToken: token) { $0 == 0 ? never : Future(value: 0) }
                .map(on: .synchronous) { values in
                    probe.touch()
                    return values[0]
                }
        case .firstCompleted:
            return [never, Future<Int>(on: DroppingContext()) { 0 }].firstCompleted(cancellationToken: token)
                .map(on: .synchronous) { value in
                    probe.touch()
                    return value
                }
        case .firstSuccess:
            // The failed input leaves it waiting for the one that never completes.
            return [never, Future<Int>(error: AttackError())].firstSuccess(cancellationToken: token)
                .map(on: .synchronous) { value in
                    probe.touch()
                    return value
                }
        case .race:
            return Future.race(
                on: .synchronous,
                cancellationToken: token,
                [{ @Sendable _ in never }, { @Sendable _ in Future<Int>(on: DroppingContext()) { 0 } }]
            )
            .map(on: .synchronous) { value in
                probe.touch()
                return value
            }
        }
    }
}

extension Lifetimes {
    /// How much the resident set may grow over `loop` combinators made and dropped, after a
    /// warm-up: a few MB, where keeping them would cost tens.
    static let growthLimit = 8 << 20

    /// Makes and drops `loop` of `combinator` on inputs that never complete, first with no token,
    /// then each with the token of a request of its own, dropped uncancelled; writes the resident
    /// set before and after each loop (read after a warm-up of a tenth as many) to the file at
    /// `figures`, and fails when a result or its closure was kept, or when the resident set grew
    /// by `growthLimit` or more. The
    /// bound is checked without a sanitizer only, whose runtime keeps memory of its own
    /// (AddressSanitizer holds freed blocks in its quarantine); under AddressSanitizer, its
    /// LeakSanitizer check at this process's exit finds what was kept.
    static func gatheringOnNeverCompleting(_ combinator: GatheringCombinator, figures: String) {
        let counter = ReleaseCounter()
        var measurements: [String] = []
        for withToken in [false, true] {
            func makeAndDrop() {
                let request = withToken ? CancellationRequest() : nil
                _ = combinator.apply(token: request?.token ?? .none, capturing: counter.make())
            }
            for _ in 0..<loop / 10 { makeAndDrop() }
            let before = residentBytes() ?? 0
            for _ in 0..<loop { makeAndDrop() }
            let after = residentBytes() ?? 0
            let shape = withToken ? "with dropped requests" : "with no token"
            let measured = "\(combinator) \(shape): \(loop), resident set \(before / 1024) KB -> \(after / 1024) KB"
            measurements.append(measured)
            try? measurements.joined(separator: "\n").write(toFile: figures, atomically: true, encoding: .utf8)
            let kept = (withToken ? 2 : 1) * (loop + loop / 10) - counter.released
            guard kept == 0 else { fatalError("\(measured); \(kept) results were kept") }
            if !AttackSize.isSanitized, after - before >= growthLimit {
                fatalError("\(measured); it grew by \(growthLimit / 1024) KB or more")
            }
        }
    }
}

extension Attacks {
    @Suite(.serialized, .timeLimit(.minutes(AttackLimit.minutes(5))))
    struct LifetimeAttacks {
        @Test func `a stream stage made and dropped without a subscriber is released, closure and captures`() {
            let promise = StreamPromise<Int>(capacity: 1)
            let counter = ReleaseCounter()
            var stage: Weak<FutureStream<Int>>?
            do {
                let probe = counter.make()
                let mapped = promise.stream.map(on: .synchronous) { value in
                    probe.touch()
                    return value + 1
                }
                stage = Weak(mapped.filter { _ in true })
            }
            #expect(stage?.isAlive == false)
            #expect(counter.released == 1)
            promise.fulfill(1)  // reaches no stage
        }

        @Test func `stages held only by a subscriber deliver, and go when it unsubscribes`() {
            let promise = StreamPromise<Int>(capacity: 0)
            let counter = ReleaseCounter()
            let request = CancellationRequest()
            let seen = Shared<[Int]>([])
            do {
                let probe = counter.make()
                promise.stream
                    .map(on: .synchronous) { value in
                        probe.touch()
                        return value * 10
                    }
                    .filter(on: .synchronous) { $0 > 10 }
                    .onSuccess(on: .synchronous, cancellationToken: request.token) { value in
                        seen.withLock { $0.append(value) }
                    }
            }
            promise.fulfill(1)
            promise.fulfill(2)
            #expect(seen.value == [20])
            #expect(counter.released == 0)
            request.cancel()
            #expect(counter.released == 1)
            promise.fulfill(3)
            #expect(seen.value == [20])
        }

        @Test func `stages held only by a for-await loop deliver until the loop ends`() async throws {
            let promise = StreamPromise<Int>(capacity: 3)
            promise.fulfill(1)
            promise.fulfill(2)
            promise.finish()
            var values: [Int] = []
            for try await value in promise.stream.map(on: .synchronous, { $0 + 1 }).values { values.append(value) }
            #expect(values == [2, 3])
        }

        @Test func `a dropped andThen stage stays subscribed: its side effect is its point`() {
            let promise = StreamPromise<Int>(capacity: 0)
            let seen = Shared<[Int]>([])
            promise.stream.andThen(on: .synchronous) { result in
                if case .success(let value) = result { seen.withLock { $0.append(value) } }
            }
            promise.fulfill(1)
            promise.fulfill(2)
            #expect(seen.value == [1, 2])
        }

        @Test func `a stage that a token cancels is released even if its token lives on`() async {
            let promise = StreamPromise<Int>(capacity: 0)
            let longLived = CancellationRequest()
            let counter = ReleaseCounter()
            do {
                let probe = counter.make()
                _ = promise.stream.map(on: .default, cancellationToken: longLived.token) { value in
                    probe.touch()
                    return value
                }
            }
            // The stage leaves its source at once; its subscriber ends on `.default`, which then
            // releases the closure.
            let clock = ContinuousClock()
            let deadline = clock.now + patient(.seconds(30))
            while counter.released == 0, clock.now < deadline { await Task.yield() }
            #expect(counter.released == 1)
            withExtendedLifetime(longLived) {}
        }

        @Test func `maps made and dropped per request on a long-lived stream keep nothing`() async {
            let result = await #expect(
                processExitsWith: .success,
                observing: [\.standardOutputContent, \.standardErrorContent]
            ) {
                Lifetimes.droppedStreamMaps()
            }
            if let result { print(String(decoding: result.standardOutputContent, as: UTF8.self)) }
            report(result)
        }

        @Test func `chains with a token on futures that never complete go with their dropped requests`() async {
            let result = await #expect(
                processExitsWith: .success,
                observing: [\.standardOutputContent, \.standardErrorContent]
            ) {
                Lifetimes.chainsWithDroppedRequests()
            }
            if let result { print(String(decoding: result.standardOutputContent, as: UTF8.self)) }
            report(result)
        }

        @Test func `maps made and dropped per request on a pending future wait for its completion, then go`() async {
            let result = await #expect(
                processExitsWith: .success,
                observing: [\.standardOutputContent, \.standardErrorContent]
            ) {
                Lifetimes.droppedFutureMaps()
            }
            if let result { print(String(decoding: result.standardOutputContent, as: UTF8.self)) }
            report(result)
        }

        /// The child writes its figures to a file rather than to an observed standard output: the
        /// testing library reads each observed stream with a blocking read, which holds a thread
        /// of the cooperative pool (two here, with the one its events come back on) for the
        /// child's whole run, and other suites' async tests then wait for seconds.
        @Test(arguments: GatheringCombinator.allCases)
        func `combinators over several inputs on futures that never complete, made and dropped, keep nothing`(
            combinator: GatheringCombinator
        ) async {
            let figures = FileManager.default.temporaryDirectory
                .appendingPathComponent("futurelib-lifetime-\(combinator)-\(UUID().uuidString).txt").path
            defer { try? FileManager.default.removeItem(atPath: figures) }
            await #expect(processExitsWith: .success) { [combinator, figures = figures as String] in
                Lifetimes.gatheringOnNeverCompleting(combinator, figures: figures)
            }
            print((try? String(contentsOfFile: figures, encoding: .utf8)) ?? "\(combinator): no figures written")
        }
    }
}
