import Dispatch
import FutureLib
import Synchronization
import TestSupport
import Testing

// The examples of the DocC articles in Sources/FutureLib/FutureLib.docc and
// Sources/Cancellation/Cancellation.docc that are not already in the guide examples.

let indexed = Mutex<[String]>([])

func index(_ words: [String]) {
    indexed.withLock { $0 += words }
}

// MARK: - FutureLib landing page and Getting Started

func landingPage(id: Int) async throws -> Image {
    let request = CancellationRequest(cancelAfter: .seconds(3))
    let token = request.token
    let thumbnail: Future<Image> = fetchUser(id, cancellationToken: token)
        .flatMap(cancellationToken: token) { user in
            download(user.avatarURL, cancellationToken: token)
        }
        .map { bytes in render(bytes) }

    // Or thumbnail.onSuccess { … }, or a blocking thumbnail.value().
    let image = try await thumbnail.value()
    return image
}

func runWorkAndGetItsValue(document: Document) async throws -> Int {
    let words = Future { try parse(document) }  // on `.default`
    let count = words.map { $0.count }  // when `words` succeeds
    count.onSuccess { print("\($0) words") }  // runs exactly once
    let total = try await count.value()  // suspends, never blocks
    return total
}

/// Documentation/GettingStarted.md: async code of a `main.swift` goes in a function.
func main(count: Future<Int>) async throws {
    let total = try await count.value()
    print(total)
}

func load(_ url: String, with legacy: LegacyClient) -> Future<[UInt8]> {
    let promise = Promise<[UInt8]>()
    legacy.load(url) { data, error in
        if let data { promise.fulfill(data) } else { promise.reject(error ?? LoadError.empty) }
    }
    return promise.future
}

func cancelByDeadline(id: Int) async -> Image? {
    let request = CancellationRequest(cancelAfter: .seconds(3))
    let token = request.token
    let avatar = fetchUser(id, cancellationToken: token)
        .flatMap(cancellationToken: token) { user in
            download(user.avatarURL, cancellationToken: token)
        }
        .map(cancellationToken: token) { render($0) }

    do {
        let image = try await avatar.value()
        return image
    } catch is CancellationError {
        // the deadline passed, or someone called request.cancel()
        return nil
    } catch {
        return nil
    }
}

// MARK: - Execution contexts

func contexts(document: Document) -> Future<Int> {
    let queue = DispatchQueue(label: "com.example.index")
    let fourAtATime = LimitedExecutionContext(maxConcurrency: 4)

    let parsed = Future(on: fourAtATime) { try parse(document) }
    parsed.onSuccess(on: queue) { words in index(words) }  // on the queue
    return parsed.map(on: .synchronous) { $0.count }  // inline
}

struct MainQueue: ExecutionContext {
    func execute(_ work: @escaping @Sendable () -> Void) {
        DispatchQueue.main.async(execute: work)
    }
}

// MARK: - Bridging with async/await

func greeting(for id: Int) async throws -> String {
    let user = try await fetchUser(id).value()
    return "Hello, \(user.name)"
}

func asyncWorkAsAFuture(client: Client, url: String) -> Future<[UInt8]> {
    let request = CancellationRequest(cancelAfter: .seconds(2))
    let bytes = Future(cancellationToken: request.token) {
        // Task.sleep, URLSession, … see the task's cancellation.
        try await client.fetch(url)
    }
    return bytes
}

func avatar(for id: Int) async throws -> Image {
    try await withTaskCancellationToken { token in
        try await fetchUser(id, cancellationToken: token)
            .flatMap(cancellationToken: token) { user in
                download(user.avatarURL, cancellationToken: token)
            }
            .map(cancellationToken: token) { render($0) }
            .value()
    }
}

func sleepUnlessCancelled(_ token: CancellationToken) async throws {
    try await withCancellation(token) {
        // Throws CancellationError when `token` is cancelled.
        try await Task.sleep(for: .seconds(60))
    }
}

// MARK: - Cancellation: Getting Started with Tokens

func giveUpAfterTwoSeconds() -> Int? {
    let request = CancellationRequest(cancelAfter: .seconds(2))
    do {
        let token = request.token
        let sum = try sumOfSquares(upTo: 1_000_000, cancellationToken: token)
        print(sum)
        return sum
    } catch is CancellationError {
        print("gave up after 2 s")
        return nil
    } catch {
        return nil
    }
}

// MARK: - Tests

@Suite struct DocCArticleExamples {
    @Test func futureLibArticles() async throws {
        _ = try await landingPage(id: 1)
        #expect(try await runWorkAndGetItsValue(document: Document(text: "a b c")) == 3)
        try await main(count: Future(value: 3))
        #expect(try await load("ab", with: LegacyClient()).value() == Array("ab".utf8))
        #expect(await cancelByDeadline(id: 2) != nil)
        #expect(try await contexts(document: Document(text: "x y")).value() == 2)
        #expect(try await greeting(for: 7) == "Hello, user 7")
        #expect(try await asyncWorkAsAFuture(client: Client(), url: "u").value() == Array("u".utf8))
        _ = try await avatar(for: 8)
        await #expect(throws: CancellationError.self) {
            try await Task { try await sleepUnlessCancelled(.cancelled) }.value
        }
    }

    @Test func cancellationArticles() {
        #expect(giveUpAfterTwoSeconds() != nil)
    }
}
