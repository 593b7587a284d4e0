import Dispatch
import FutureLib
import FutureTestSupport
import XCTest

// The XCTest example of Documentation/Testing.md, run (`swift test` runs XCTest and Swift Testing
// tests alike). Keep the two in step. The code under test is in TestingGuideTests.swift.

final class ConfigTests: XCTestCase {
    func testParsesConfig() throws {  // on the main thread: blocking is fine
        let config = try loadConfig("port=8080").value(timeout: .seconds(10))
        XCTAssertEqual(config.port, 8080)
    }

    func testPromiseFulfilledByATask() throws {  // the cooperative pool is free
        let promise = Promise<Int>()
        Task { promise.fulfill(try await doubled(21)) }
        XCTAssertEqual(try promise.future.value(timeout: .seconds(10)), 42)
    }

    func testMainQueueWorkInAnAsyncTest() async throws {  // the main thread is free
        let label = loadConfig("port=8080").map(on: DispatchQueue.main) { "port \($0.port)" }
        let text = try await label.value()
        XCTAssertEqual(text, "port 8080")
    }

    // What the guide says about where XCTest runs tests, checked.

    func testSynchronousTestsRunOnTheMainThreadInNoTask() {
        XCTAssertTrue(isMainThread())
        XCTAssertFalse(withUnsafeCurrentTask { $0 != nil })
    }

    func testAsyncTestsRunInATaskOffTheMainThread() async {
        XCTAssertTrue(withUnsafeCurrentTask { $0 != nil })
        XCTAssertFalse(isMainThread())
    }

    func testBlockingTheMainThreadStopsMainQueueWork() {
        let label = Future(value: 8080).map(on: DispatchQueue.main) { "port \($0)" }
        // The main queue's work cannot run while the test blocks the main thread: the wait runs out.
        XCTAssertFalse(label.wait(timeout: .milliseconds(100)))
        // value() and value(timeout:) see it and refuse at once.
        XCTAssertThrowsError(try label.value(timeout: .seconds(3600))) { error in
            XCTAssertEqual(error as? FutureError, .deadlock(queue: DispatchQueue.main.label))
        }
    }
}

/// Whether the calling thread is the process's main thread (Foundation's `Thread.isMainThread`
/// without Foundation).
private func isMainThread() -> Bool {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    defer { DispatchQueue.main.setSpecific(key: key, value: nil) }
    return DispatchQueue.getSpecific(key: key) == true
}
