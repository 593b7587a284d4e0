import Dispatch
import FutureLib
import TestSupport
import Testing

// The examples of Documentation/Futures.md and of the FutureLib DocC articles on combinators
// and execution contexts, in the order they appear there.

struct Document: Sendable {
    let text: String
}

func parse(_ document: Document) throws -> [String] {
    guard !document.text.isEmpty else { throw LoadError.empty }
    return document.text.split(separator: " ").map(String.init)
}

final class Client: Sendable {
    func fetch(_ url: String) async throws -> [UInt8] {
        try await Task.sleep(for: .milliseconds(1))
        return Array(url.utf8)
    }
}

// MARK: - Creating futures

func creatingFutures(document: Document, client: Client, url: String, legacy: LegacyClient) -> [Future<Int>] {
    let ready = Future(value: 42)  // already succeeded
    let failed = Future<Int>(error: LoadError.empty)  // already failed
    let parsed = Future { try parse(document) }  // runs on `.default`, FutureLib's own pool
    let fetched = Future { try await client.fetch(url) }  // async work in a task on FutureLib's pool
    let later = Future(value: "tick", after: .milliseconds(10))

    let promise = Promise<[UInt8]>()  // completed by hand, e.g. from a callback
    legacy.load(url) { data, error in
        if let data { promise.fulfill(data) } else { promise.reject(error ?? LoadError.empty) }
    }
    let loaded = promise.future

    return [
        ready, failed, parsed.map { $0.count }, fetched.map { $0.count }, later.map { $0.count },
        loaded.map { $0.count },
    ]
}

/// `Future(method:)` with a token handed to the operation.
func wrappedCallback(_ client: HTTPClient, url: String, request: CancellationRequest) -> Future<[UInt8]> {
    let bytes = Future<[UInt8]>(cancellationToken: request.token) { completion, token in
        let task = client.dataTask(with: url) { data, error in completion(data, error) }
        token.onCancel { task.cancel() }  // runs only if `request` is cancelled before completion
        task.resume()
    }
    return bytes
}

// MARK: - Getting the result

func gettingTheResult(_ future: Future<User>) async throws -> User {
    let user = try await future.value()
    _ = try await future.value(timeout: .seconds(2))
    future.onComplete { result in print(result) }
    future.onSuccess(on: .synchronous) { user in print(user.name) }
    future.onFailure { error in print(error) }
    return user
}

/// The blocking forms: tests, scripts and threads you own.
@available(*, noasync)
func blockingAccess(_ future: Future<User>) throws -> User {
    _ = future.wait(timeout: .seconds(2))
    _ = try future.value(timeout: .seconds(2))
    return try future.value()
}

// MARK: - Combinators

func combinators(id: Int) async throws -> (Image, User, [Post]) {
    let avatar: Future<Image> = fetchUser(id)
        .map { $0.avatarURL }  // transform the value
        .flatMap { url in download(url) }  // chain the next asynchronous step
        .map { render($0) }
        .recover { _ in .placeholder }  // turn a failure into a value
        .timeout(after: .seconds(5))  // stop waiting (the work goes on)

    let (user, posts) = try await zip(fetchUser(id), fetchPosts(id)).value()  // any number, any types
    return (try await avatar.value(), user, posts)
}

func moreCombinators(id: Int) -> [Future<String>] {
    let adult = fetchUser(id).filter { $0.age >= 18 }.map { $0.name }
    let greeting = fetchUser(id).transform(success: { "Hello, \($0.name)" }, failure: { _ in LoadError.notFound })
    let status = fetchUser(id).transform { result in .success(result.isSuccess ? "up" : "down") }
    let mapped = fetchUser(-1).mapError { _ in LoadError.notFound }.map { $0.name }
    let logged = fetchUser(id).andThen { result in print(result) }.map { $0.name }
    let onMain = fetchUser(id).hop(to: DispatchQueue(label: "ui")).map(on: .synchronous) { $0.name }
    let fallback = download("").recoverWith { _ in download("mirror") }.map { String(decoding: $0, as: UTF8.self) }
    return [adult, greeting, status, mapped, logged, onMain, fallback]
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { true } else { false }
    }
}

func onSequences(urls: [String], ids: [Int]) -> (Future<[[UInt8]]>, Future<[User]>, Future<Int>, Future<User>) {
    let pages: Future<[[UInt8]]> = urls.traverse(maxConcurrency: 4) { download($0) }  // at most 4 at once, in order
    let users = ids.map { fetchUser($0) }.sequence()  // all values, or the first failure
    let outcomes = urls.map { download($0) }.results()  // every Result, never fails unless cancelled
    let total = outcomes.map { $0.count }
    let sizes = ids.map { fetchUser($0).map { $0.age } }
    let sum = sizes.fold(initial: 0) { $0 + $1 }  // combine in input order
    let fastest = [fetchUser(1), fetchUser(2)].firstCompleted()  // the first result in time
    return (pages, users, total.flatMap { count in sum.map { $0 + count } }, fastest)
}

// MARK: - Cancellation reaches every step

func cancellableChain(id: Int) -> Future<Image> {
    let request = CancellationRequest(cancelAfter: .seconds(3))
    return fetchUser(id, cancellationToken: request.token)
        .flatMap(cancellationToken: request.token) { download($0.avatarURL, cancellationToken: request.token) }
        .map(cancellationToken: request.token) { render($0) }
}

// MARK: - Tests

@Suite struct FuturesGuideExamples {
    @Test func creating() async throws {
        let request = CancellationRequest()
        let futures = creatingFutures(
            document: Document(text: "a b"),
            client: Client(),
            url: "abc",
            legacy: LegacyClient()
        )
        let results = await futures.results().outcome
        #expect(try results.get().count == 6)
        #expect(try await wrappedCallback(HTTPClient(), url: "x", request: request).value() == Array("x".utf8))
    }

    @Test func resultsAndCombinators() async throws {
        #expect(try await gettingTheResult(fetchUser(3)).id == 3)
        let (image, user, posts) = try await combinators(id: 4)
        #expect(image == render(Array(user.avatarURL.utf8)))
        #expect(posts.count == 1)
        let outcomes = await moreCombinators(id: 30).results().outcome
        #expect(try outcomes.get().count == 7)
        let (pages, users, total, fastest) = onSequences(urls: ["a", "bc"], ids: [1, 2])
        #expect(try await pages.value() == [Array("a".utf8), Array("bc".utf8)])
        #expect(try await users.value().map(\.id) == [1, 2])
        #expect(try await total.value() == 2 + 21 + 22)
        _ = try await fastest.value()
        _ = try await cancellableChain(id: 5).value()
    }

    @Test func blocking() async throws {
        let user = await onDedicatedThread { Result { try blockingAccess(fetchUser(6)) } }
        #expect(try user.get().id == 6)
    }
}

extension Future {
    /// The value awaited without throwing, as a `Result`.
    var outcome: Result<Value, any Error> {
        get async {
            do { return .success(try await value()) } catch { return .failure(error) }
        }
    }
}
