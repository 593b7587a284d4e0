import Dispatch
import FutureLib
import FutureTestSupport
import Testing

// The examples of Documentation/Testing.md, compiled and run: a renamed API breaks the build.
// Keep the two in step (same names, same code).

// MARK: - Code under test (the guide's running example)

struct Config: Equatable, Sendable {
    var port: Int
}

enum ConfigError: Error, Equatable {
    case missingPort
}

/// Parses `port=…` on FutureLib's pool.
func loadConfig(_ text: String, cancellationToken: CancellationToken = .none) -> Future<Config> {
    Future(cancellationToken: cancellationToken) {
        guard text.hasPrefix("port="), let port = Int(text.dropFirst(5)) else { throw ConfigError.missingPort }
        return Config(port: port)
    }
}

/// Async code under test.
func doubled(_ value: Int) async throws -> Int {
    try await Task.sleep(for: .milliseconds(10))
    return value * 2
}

/// Answers after `delay`, unless `cancellationToken` is cancelled first.
func slowConfig(after delay: Duration, cancellationToken: CancellationToken = .none) -> Future<Config> {
    Future(value: Config(port: 80), after: delay, cancellationToken: cancellationToken)
}

// MARK: - Examples

@Suite(.timeLimit(.minutes(3)))
struct TestingGuideTests {
    // "Synchronous tests"
    @Test func parsesConfig() throws {
        let config = try loadConfig("port=8080").value(timeout: .seconds(10))
        #expect(config.port == 8080)
    }

    @Test func rejectsMissingPort() {
        #expect(throws: ConfigError.missingPort) {
            try loadConfig("host=example.org").value(timeout: .seconds(10))
        }
    }

    // "Async tests"
    @Test func parsesConfigAsync() async throws {
        let config = try await loadConfig("port=8080").value()
        #expect(config.port == 8080)
    }

    @Test func rejectsMissingPortAsync() async {
        await #expect(throws: ConfigError.missingPort) {
            try await loadConfig("host=example.org").value(timeout: .seconds(10))
        }
    }

    // "Testing cancellation"
    @Test func cancelStopsTheWait() async {
        let request = CancellationRequest()
        let config = slowConfig(after: .seconds(60), cancellationToken: request.token)
        request.cancel()
        await #expect(throws: CancellationError.self) { try await config.value() }
    }

    @Test func deadlineCancelsSlowWork() async {
        let deadline = CancellationRequest(cancelAfter: .milliseconds(50))
        let config = slowConfig(after: .seconds(60), cancellationToken: deadline.token)
        await #expect(throws: CancellationError.self) { try await config.value() }
    }

    @Test func alreadyCancelledTokenStartsNothing() {
        #expect(throws: CancellationError.self) {
            try loadConfig("port=1", cancellationToken: .cancelled).value(timeout: .seconds(10))
        }
    }

    // "Checking for a future that must not complete"
    @Test func stillPending() {
        let request = CancellationRequest()
        defer { request.cancel() }  // the test leaves no 60-second timer (and its future) behind
        let config = slowConfig(after: .seconds(60), cancellationToken: request.token)
        #expect(!config.wait(timeout: .milliseconds(10)))
        #expect(throws: FutureError.timeout) { try config.value(timeout: .milliseconds(10)) }
    }

    // "Blocking is safe here": blocking on async work and timers from parallel synchronous tests.
    @Test(arguments: 0..<4)
    func blockingOnAsyncWork(index: Int) throws {
        let doubled = Future { () async throws -> Int in
            try await Task.sleep(for: .milliseconds(10))
            return index * 2
        }
        #expect(try doubled.value(timeout: .seconds(10)) == index * 2)
    }

    // "Work you start yourself is not covered": the fixes (the deadlocking example is not run).
    @Test(arguments: 0..<8)
    func blockingOnAFutureOfAsyncWork(index: Int) throws {
        let result = Future { try await doubled(index) }  // its task runs on FutureLib's threads
        #expect(try result.value(timeout: .seconds(10)) == index * 2)
    }

    @Test(arguments: 0..<8)
    func awaitingAsyncWork(index: Int) async throws {
        #expect(try await doubled(index) == index * 2)
    }

    // "Blocking a serial queue on its own work": the wait on the queue runs the continuation.
    @Test func serialQueueWaitRunsTheContinuation() {
        let database = DispatchQueue(label: "database")
        let port = database.sync {
            try? loadConfig("port=8080").map(on: database) { $0.port }.value(timeout: .seconds(10))
        }
        #expect(port == 8080)
    }

    // "Blocking a serial queue on its own work": blocking from the test itself.
    @Test func serialQueueWithoutDeadlock() throws {
        let database = DispatchQueue(label: "database")
        let saved = loadConfig("port=8080").map(on: database) { $0.port }
        #expect(try saved.value(timeout: .seconds(10)) == 8080)  // blocks this thread, not `database`
    }
}
