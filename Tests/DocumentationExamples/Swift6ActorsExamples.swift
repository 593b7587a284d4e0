import FutureLib
import TestSupport
import Testing

// The examples of the DocC article "Swift 6 and actors" (FutureLib.docc/Swift6AndActors.md) and
// of the section "Swift 6: the main actor, actors and async closures" in Documentation/Futures.md,
// in the order they appear there.

struct Profile: Sendable, Equatable {
    let user: User
    let bio: String
}

/// Async work the examples call: what a database or another service would do.
@Sendable func enrich(_ user: User) async throws -> Profile {
    try await Task.sleep(for: .milliseconds(1))
    return Profile(user: user, bio: "\(user.name) is \(user.age)")
}

// MARK: - The main actor

@MainActor final class ProfileViewModel {
    var title = "Loading…"
    var avatar: Image?

    func load(id: Int, cancellationToken token: CancellationToken) {
        let user = fetchUser(id, cancellationToken: token)
        user.onSuccess(on: .mainActor) { self.title = $0.name }
        user.onFailure(on: .mainActor, cancellationToken: token) { error in
            self.title = error is CancellationError ? "Cancelled" : "Failed"
        }
        _ =
            user
            .flatMap(cancellationToken: token) { download($0.avatarURL, cancellationToken: token) }
            .map(on: .mainActor) { self.avatar = render($0) }
    }
}

// MARK: - Your own actors

actor Cache {
    private var users: [Int: User] = [:]

    func prefetch(_ id: Int) {
        fetchUser(id).onSuccess(on: self) { cache, user in cache.users[id] = user }
    }

    func user(_ id: Int) -> User? { users[id] }
}

// MARK: - Async closures

func asyncClosures(id: Int, request: CancellationRequest) -> [Future<String>] {
    let token = request.token
    let profile = fetchUser(id).map(cancellationToken: token) { try await enrich($0) }

    let name = fetchUser(id).map { $0.name }  // no await: the synchronous form, on `.default`
    let bio = fetchUser(id).map { user async throws in user.name }  // `async`: a task, though it never awaits
    return [profile.map { $0.bio }, name, bio]
}

// MARK: - A server

/// One request of a server: a linked request per request on the process's shutdown token, with a
/// deadline, and async steps that both cancel.
func handle(userID: Int, shutdown: CancellationToken) async throws -> String {
    let request = CancellationRequest(linkedTo: [shutdown])
    request.cancel(after: .seconds(5))
    let token = request.token
    let page = fetchUser(userID, cancellationToken: token)
        .map(cancellationToken: token) { user in try await enrich(user) }
        .map { profile in "<h1>\(profile.user.name)</h1><p>\(profile.bio)</p>" }
    return try await page.value()
}

// MARK: - Tasks and futures

func tasksAndFutures(request: CancellationRequest) async throws -> Int {
    let task = Task { try await enrich(User(id: 1, name: "Ada", age: 36)) }
    let profile = Future(task, cancellationToken: request.token)  // the token cancels `task`
    let age = try await profile.map { $0.user.age }.value()  // back in structured code
    return age
}

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct Swift6ActorsExamples {
    @Test @MainActor func `the view model's title and avatar are set on the main actor`() async throws {
        let model = ProfileViewModel()
        let request = CancellationRequest()
        model.load(id: 3, cancellationToken: request.token)
        #expect(await eventuallyOnMain { model.avatar != nil })
        #expect(model.title == "user 3")
    }

    @Test func `the cache stores the prefetched user`() async throws {
        let cache = Cache()
        await cache.prefetch(4)
        var user: User?
        for _ in 0..<10_000 where user == nil {
            user = await cache.user(4)
            if user == nil { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(user?.name == "user 4")
    }

    @Test func `the async closures give their values`() async throws {
        let values = try await asyncClosures(id: 5, request: CancellationRequest()).sequence().value()
        #expect(values == ["user 5 is 25", "user 5", "user 5"])
    }

    @Test func `the server handles a request, and a shutdown cancels it`() async throws {
        let shutdown = CancellationRequest()
        #expect(try await handle(userID: 6, shutdown: shutdown.token) == "<h1>user 6</h1><p>user 6 is 26</p>")
        shutdown.cancel()
        await #expect(throws: CancellationError.self) { try await handle(userID: 6, shutdown: shutdown.token) }
    }

    @Test func `a task becomes a future and back`() async throws {
        #expect(try await tasksAndFutures(request: CancellationRequest()) == 36)
    }
}

/// Polls `condition` on the main actor, yielding between tries, until it holds (or a generous limit).
@MainActor
private func eventuallyOnMain(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<30_000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}
