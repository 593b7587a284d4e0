import FutureLib
import Synchronization
import Testing

// The contract's Swift 6 isolation, async-closure and time shapes (Documentation/Guarantees.md,
// "Swift 6 isolation and async closures"), exactly as written there, with every async-closure form
// and every API that takes `clock:`. This file compiling in
// Swift 6 language mode, with no `MainActor.assumeIsolated`, no `@unchecked` and no
// `nonisolated(unsafe)`, is the test; the runtime tests below also run them.

@MainActor final class ViewModel {
    var text = ""
    func show(_ name: Future<String>) {
        name.onSuccess(on: .mainActor) { self.text = $0 }  // runs on the main actor
        let total: Future<Int> = name.map(on: .mainActor) { self.text.count + $0.count }
        _ = total
    }
}

struct User: Sendable {
    var name: String
}

struct Profile: Sendable {
    var user: User
    var bio: String
}

@Sendable func enrich(_ user: User) async throws -> Profile {
    try await Task.sleep(for: .milliseconds(1))
    return Profile(user: user, bio: "bio of \(user.name)")
}

func profile(of user: Future<User>, cancellationToken token: CancellationToken) -> Future<Profile> {
    let profile: Future<Profile> = user.map(cancellationToken: token) { try await enrich($0) }
    return profile
}

/// Compiles only for a `Sendable` type.
private func requireSendable<T: Sendable>(_: T.Type) {}

/// "flatMap, recover, recoverWith, onSuccess/onComplete likewise accept async closures."
func asyncClosureShapes(of user: Future<User>, cancellationToken token: CancellationToken) -> [Future<Profile>] {
    let fallback = Profile(user: User(name: "none"), bio: "")
    let profile: Future<Profile> = user.map(cancellationToken: token) { try await enrich($0) }
    let flat: Future<Profile> = user.flatMap(cancellationToken: token) { Future(value: try await enrich($0)) }
    let recovered: Future<Profile> = profile.recover(cancellationToken: token) { _ in
        try await enrich(fallback.user)
    }
    let recoveredWith: Future<Profile> = profile.recoverWith(cancellationToken: token) { _ in
        Future(value: try await enrich(fallback.user))
    }
    user.onSuccess(cancellationToken: token) { _ in await Task.yield() }
    user.onComplete(cancellationToken: token) { _ in await Task.yield() }
    return [profile, flat, recovered, recoveredWith]
}

/// "Every API that waits for time (cancelAfter, cancel(after:), Future(value:after:), timeout(after:),
/// withTimeout, retry's backoff) takes `clock:`", here a `ManualClock`.
/// (A bare `Promise<Int>().future.timeout(…)` drops its promise, whose future then fails at once
/// with `brokenPromise`; here the promise is kept, so that only the clock can end the wait.)
func clockShapes(_ clock: ManualClock, pending: Promise<Int>) -> (request: CancellationRequest, futures: [Future<Int>])
{
    let request = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
    request.cancel(after: .seconds(30), clock: clock)
    let delayed: Future<Int> = Future(value: 1, after: .seconds(5), clock: clock)
    let late: Future<Int> = pending.future.timeout(after: .seconds(5), clock: clock)
    // On `.synchronous`, so that the operations have run, and armed their timers, when this returns.
    let bounded: Future<Int> = Future.withTimeout(.seconds(5), clock: clock, on: .synchronous) { _ in pending.future }
    let retried: Future<Int> = Future.retry(
        maxAttempts: 2,
        backoff: .constant(.seconds(5)),
        clock: clock,
        on: .synchronous
    ) { _ in
        Future(error: FutureError.noSuchElement)
    }
    return (request, [delayed, late, bounded, retried])
}

// 12 minutes, as `HangLimit` gives the other suites: `await clock.advanceAndSettle(by:)` returns once FutureLib's
// pool is idle in the whole process, and in a full parallel run the other suites keep it busy for as long
// as they run (Testing.md, "What `advanceAndSettle(by:)` does", says how long). The limit only bounds a hang.
@Suite(.timeLimit(.minutes(12)))
struct Swift6ShapesTests {
    @Test @MainActor func `the view model's continuation sets its text on the main actor`() async throws {
        let model = ViewModel()
        let name = Future(value: "Ada")
        model.show(name)
        // Continuations on .mainActor run in registration order: this one runs after show's.
        try await name.map(on: .mainActor) { _ in () }.value()
        #expect(model.text == "Ada")
    }

    @Test func `the async closure shapes of flatMap, recover, recoverWith, onSuccess and onComplete run`() async throws
    {
        let futures = asyncClosureShapes(of: Future(value: User(name: "Ada")), cancellationToken: .none)
        for future in futures {
            #expect(try await future.value().bio == "bio of Ada")
        }
    }

    @Test func `the time shapes take clock: and move only with the manual clock, as the contract writes them`()
        async throws
    {
        requireSendable(ManualClock.self)
        requireSendable(MainActorExecutionContext.self)
        let clock = ManualClock()
        let now: Duration = clock.now
        #expect(now == .zero)
        let pending = Promise<Int>()
        let (request, futures) = clockShapes(clock, pending: pending)
        let ranInside = Atomic(false)
        request.token.onCancel { ranInside.store(true, ordering: .relaxed) }
        #expect(futures.allSatisfy { !$0.isCompleted })  // nothing moves without the clock
        await clock.advanceAndSettle(by: .seconds(29))  // not cancelled
        #expect(!request.isCancellationRequested)
        await clock.advanceAndSettle(by: .seconds(1))  // cancelled; its handlers ran inside advance(by:)
        #expect(request.isCancellationRequested && ranInside.load(ordering: .relaxed))
        #expect(try await futures[0].value() == 1)
        await #expect(throws: FutureError.timeout) { try await futures[1].value() }
        await #expect(throws: FutureError.timeout) { try await futures[2].value() }
        await #expect(throws: FutureError.noSuchElement) { try await futures[3].value() }
        withExtendedLifetime(pending) {}
    }

    @Test func `the async map shape enriches the user`() async throws {
        let request = CancellationRequest()
        let result = try await profile(of: Future(value: User(name: "Ada")), cancellationToken: request.token).value()
        #expect(result.bio == "bio of Ada")
    }
}
