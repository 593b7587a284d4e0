import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureErrorTests {
    @Test func `the broken-promise error names the file and line that created the promise`() async {
        let line = #line + 1
        let future = Promise<Int>().future  // dropped at once
        let result = await settled(future)
        guard case .failure(FutureError.brokenPromise(let site?)) = result else {
            Issue.record("expected brokenPromise with a site, got \(result)")
            return
        }
        #expect(site.fileID == "FutureLibTests/FutureErrorTests.swift")
        #expect(site.line == line)
        let description = "\(result.futureError!)"
        #expect(description.contains("FutureLibTests/FutureErrorTests.swift:\(line)"))
        #expect(description.hasPrefix("brokenPromise"))
    }

    @Test
    func `a broken-promise error equals brokenPromise whatever its site, and catch FutureError.brokenPromise matches`()
    {
        let located = FutureError.brokenPromise(createdAt: CreationSite())
        #expect(located == .brokenPromise)
        #expect(located == .brokenPromise(createdAt: CreationSite(fileID: "Other/File.swift", line: 1)))
        #expect(located != .timeout)
        #expect(FutureError.timeout != .noSuchElement)
        do {
            throw located
        } catch FutureError.brokenPromise {
            // matched
        } catch {
            Issue.record("catch FutureError.brokenPromise did not match \(error)")
        }
        #expect(throws: FutureError.brokenPromise) {
            try Promise<Int>().future.value(timeout: HangLimit.timeout(.seconds(30)))
        }
    }

    @Test func `no broken-promise report for a promise that was resolved or whose future was cancelled`() async {
        var resolved: Promise<Int>? = Promise<Int>()
        let resolvedFuture = resolved!.future
        resolved!.fulfill(1)
        resolved = nil
        #expect(resolvedFuture.result?.successValue == 1)

        // Work that stops on cancellation rejects its promise; dropping the promise then reports nothing.
        let request = CancellationRequest()
        var cancelled: Promise<Int>? = Promise<Int>()
        let cancelledFuture = cancelled!.future
        request.token.onCancel { [cancelled] in cancelled?.reject(CancellationError()) }
        request.cancel()
        cancelled = nil
        #expect(isCancellation(cancelledFuture.result))
    }

    @Test func `a promise made by a helper can report its caller's site`() async {
        func makePromise(fileID: StaticString = #fileID, line: UInt = #line) -> Promise<Int> {
            Promise(fileID: fileID, line: line)
        }
        let line = #line + 1
        let result = await settled(makePromise().future)
        guard case .failure(FutureError.brokenPromise(let site?)) = result else {
            Issue.record("expected brokenPromise with a site, got \(result)")
            return
        }
        #expect(site.line == line)
    }
}
