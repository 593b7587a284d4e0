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
    let thumbnail: Future<Image> = fetchUser(id, cancellationToken: request.token)
        .flatMap(cancellationToken: request.token) { user in
            download(user.avatarURL, cancellationToken: request.token)
        }
        .map { bytes in render(bytes) }

    let image = try await thumbnail.value()  // or thumbnail.onSuccess { … }, or a blocking value()
    return image
}

func runWorkAndGetItsValue(document: Document) async throws -> Int {
    let words = Future { try parse(document) }  // runs on `.default`
    let count = words.map { $0.count }  // runs when `words` succeeds
    count.onSuccess { print("\($0) words") }  // a continuation, run exactly once
    let total = try await count.value()  // suspends; never blocks a thread
    return total
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
    let avatar = fetchUser(id, cancellationToken: request.token)
        .flatMap(cancellationToken: request.token) { download($0.avatarURL, cancellationToken: request.token) }
        .map(cancellationToken: request.token) { render($0) }

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
    parsed.onSuccess(on: queue) { words in index(words) }  // on the serial queue
    return parsed.map(on: .synchronous) { $0.count }  // inline, no thread hop
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
        try await client.fetch(url)  // Task.sleep, URLSession, … see the task's cancellation
    }
    return bytes
}

func avatar(for id: Int) async throws -> Image {
    try await withTaskCancellationToken { token in
        try await fetchUser(id, cancellationToken: token)
            .flatMap(cancellationToken: token) { download($0.avatarURL, cancellationToken: token) }
            .map(cancellationToken: token) { render($0) }
            .value()
    }
}

func sleepUnlessCancelled(_ token: CancellationToken) async throws {
    try await withCancellation(token) {
        try await Task.sleep(for: .seconds(60))  // throws CancellationError when `token` is cancelled
    }
}

// MARK: - Cancellation: Getting Started with Tokens

func giveUpAfterTwoSeconds() -> Int? {
    let request = CancellationRequest(cancelAfter: .seconds(2))
    do {
        let sum = try sumOfSquares(upTo: 1_000_000, cancellationToken: request.token)
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
        #expect(try await load("ab", with: LegacyClient()).value() == Array("ab".utf8))
        #expect(await cancelByDeadline(id: 2) != nil)
        #expect(try await contexts(document: Document(text: "x y")).value() == 2)
        #expect(try await greeting(for: 7) == "Hello, user 7")
        #expect(try await asyncWorkAsAFuture(client: Client(), url: "u").value() == Array("u".utf8))
        _ = try await avatar(for: 8)
        await #expect(throws: CancellationError.self) { try await Task { try await sleepUnlessCancelled(.cancelled) }.value }
    }

    @Test func cancellationArticles() {
        #expect(giveUpAfterTwoSeconds() != nil)
    }
}
