import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// `debugDescription` of futures, promises and streams.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureDebugDescriptionTests {
    @Test func `a pending future shows its promise's creation site and how many continuations wait`() {
        let line = #line + 1
        let promise = Promise<Int>()
        #expect(
            String(reflecting: promise.future)
                == "Future<Int>(pending; promise created at FutureLibTests/Future+DebugDescriptionTests.swift:\(line); "
                + "0 continuations waiting)"
        )
        promise.future.onSuccess { _ in }
        promise.future.onFailure(on: .synchronous) { _ in }
        #expect(String(reflecting: promise.future).hasSuffix("; 2 continuations waiting)"))
        #expect(String(reflecting: promise).hasPrefix("Promise<Int>(pending; promise created at FutureLibTests/"))
        promise.fulfill(42)
        #expect(String(reflecting: promise.future) == "Future<Int>(succeeded: 42)")
        #expect(String(reflecting: promise) == "Promise<Int>(succeeded: 42)")
    }

    @Test func `a failed future shows its error; a combinator's pending future has no promise site`() {
        #expect(String(reflecting: Future<String>(value: "a")) == "Future<String>(succeeded: \"a\")")
        let failed = String(reflecting: Future<Int>(error: SampleError(code: 3)))
        #expect(failed.hasPrefix("Future<Int>(failed: "))
        #expect(failed.contains("SampleError(code: 3)"))
        let promise = Promise<Int>()
        let mapped = promise.future.map(on: .synchronous) { $0 + 1 }
        #expect(
            String(reflecting: mapped)
                == "Future<Int>(pending; completed by its work or a combinator; 0 continuations waiting)"
        )
        promise.fulfill(1)
    }

    @Test func `a stream shows whether it is open, its capacity, the results it keeps and its subscribers`() {
        let promise = StreamPromise<Int>(capacity: 3)
        promise.fulfill(1)
        promise.fulfill(2)
        promise.stream.onSuccess { _ in }
        #expect(
            String(reflecting: promise.stream)
                == "FutureStream<Int>(open; capacity 3; keeps 2 results; 1 subscriber)"
        )
        promise.finish()
        #expect(String(reflecting: promise.stream).hasPrefix("FutureStream<Int>(finished; capacity 3; keeps 2 results"))
    }
}
