import Dispatch
import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// A callback API of the old kind, for the adapters to wrap.
private final class LegacyClient: Sendable {
    func fetch(_ completion: @escaping @Sendable (Int?, (any Error)?) -> Void) {
        DispatchQueue.global().async { completion(42, nil) }
    }

    func fail(_ completion: @escaping @Sendable (Int?, (any Error)?) -> Void) {
        DispatchQueue.global().async { completion(nil, SampleError(code: 8)) }
    }

    func empty(_ completion: @escaping @Sendable (Int?, (any Error)?) -> Void) {
        completion(nil, nil)
    }

    func load(_ completion: @escaping @Sendable (Result<String, any Error>) -> Void) {
        completion(.success("loaded"))
    }

    func ping(_ completion: @escaping @Sendable (Int) -> Void) {
        completion(7)
    }

    func save(_ completion: @escaping @Sendable ((any Error)?) -> Void) {
        completion(nil)
    }

    func saveFailing(_ completion: @escaping @Sendable ((any Error)?) -> Void) {
        completion(SampleError(code: 9))
    }
}

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureAdaptersTests {
    private let client = LegacyClient()

    @Test("(Value?, Error?) callbacks: a value fulfils, an error rejects, neither fails with noSuchElement")
    func optionalPairShape() async throws {
        #expect(try await Future(method: client.fetch).value() == 42)
        await #expect(throws: SampleError(code: 8)) { try await Future(method: client.fail).value() }
        await #expect(throws: FutureError.noSuchElement) { try await Future(method: client.empty).value() }
    }

    @Test("a Future<T?> over a (T?, Error?) callback fails on nil; the Result form keeps nil as a value")
    func optionalValueType() async throws {
        let optional: Future<Int?> = Future(method: client.empty)
        await #expect(throws: FutureError.noSuchElement) { try await optional.value() }
        let fetched: Future<Int?> = Future(method: client.fetch)
        #expect(try await fetched.value() == 42)
        let kept = Future<Int?> { completion in
            client.empty { value, error in completion(error.map { .failure($0) } ?? .success(value)) }
        }
        #expect(try await kept.value() == nil)
    }

    @Test("Result, value-only and error-only callbacks")
    func otherShapes() async throws {
        #expect(try await Future(method: client.load).value() == "loaded")
        #expect(try await Future(method: client.ping).value() == 7)
        try await Future<Void>(method: client.save).value()
        await #expect(throws: SampleError(code: 9)) { try await Future<Void>(method: client.saveFailing).value() }
    }

    @Test("Result- and Error?-shaped functions passed by name infer the value type, no explicit Future<T>")
    func shapesInferTheirValueType() async throws {
        // Each `let` is typed from its initializer alone: the value-only form is disfavored.
        let loaded = Future(method: client.load)
        let saved = Future(method: client.save)
        let failed = Future(method: client.saveFailing)
        let pinged = Future(method: client.ping)
        let _: Future<String> = loaded
        let _: Future<Void> = saved
        let _: Future<Int> = pinged
        #expect(try await loaded.value() == "loaded")
        try await saved.value()
        await #expect(throws: SampleError(code: 9)) { try await failed.value() }
        #expect(try await pinged.value() == 7)
    }

    @Test("cancelling the token fails the future at once and runs the adapter's onCancel")
    func cancellationReachesTheOperation() async {
        let request = CancellationRequest()
        let stopped = CallFlag()
        let future = Future<Int>(cancellationToken: request.token) {
            (_: @escaping @Sendable (Int?, (any Error)?) -> Void, token) in
            token.onCancel { stopped.set() }  // e.g. URLSessionTask.cancel()
        }
        #expect(!future.isCompleted)
        request.cancel()
        #expect(isCancellation(future.result))
        #expect(stopped.count == 1)
    }

    @Test("after completion the adapter's onCancel is released and never runs")
    func completionReleasesOnCancel() async throws {
        let request = CancellationRequest()
        let stopped = CallFlag()
        let counter = ReleaseCounter()
        let future = Future<Int>(cancellationToken: request.token) {
            (completion: @escaping @Sendable (Result<Int, any Error>) -> Void, token) in
            let tracked = counter.make()
            token.onCancel {
                tracked.touch()
                stopped.set()
            }
            completion(.success(1))
        }
        #expect(try await future.value() == 1)
        #expect(counter.released == 1)
        request.cancel()
        #expect(stopped.count == 0)
    }

    @Test("an already cancelled token never starts the operation")
    func alreadyCancelledDoesNotStart() async {
        let started = CallFlag()
        let future = Future<Int>(cancellationToken: .cancelled) { (_: @escaping @Sendable (Int) -> Void) in
            started.set()
        }
        #expect(isCancellation(future.result))
        #expect(started.count == 0)
    }
}

/// Counts releases of the objects it made.
final class ReleaseCounter: Sendable {
    private let flag = CallFlag()

    final class Object: Sendable {
        let flag: CallFlag
        init(flag: CallFlag) { self.flag = flag }
        func touch() {}
        deinit { flag.set() }
    }

    func make() -> Object { Object(flag: flag) }
    var released: Int { flag.count }
}
