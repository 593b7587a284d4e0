import FutureLib
import Testing

// The shapes of DESIGN.md ("Swift 6 isolation, async closures and time"), exactly as written
// there. This file compiling in Swift 6 language mode, with no `MainActor.assumeIsolated`, no
// `@unchecked` and no `nonisolated(unsafe)`, is the test; the runtime tests below also run them.

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

@Suite(.timeLimit(.minutes(3)))
struct Swift6ShapesTests {
    @Test @MainActor func `the view model's continuation sets its text on the main actor`() async throws {
        let model = ViewModel()
        let name = Future(value: "Ada")
        model.show(name)
        // Continuations on .mainActor run in registration order: this one runs after show's.
        try await name.map(on: .mainActor) { _ in () }.value()
        #expect(model.text == "Ada")
    }

    @Test func `the async map shape enriches the user`() async throws {
        let request = CancellationRequest()
        let result = try await profile(of: Future(value: User(name: "Ada")), cancellationToken: request.token).value()
        #expect(result.bio == "bio of Ada")
    }
}
