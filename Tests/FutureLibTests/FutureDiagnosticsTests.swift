import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// `FutureDiagnostics.onBrokenPromise`: once per broken promise, never for a resolved one.
///
/// The hook is process-wide and other suites drop promises while this one runs, so the test counts
/// only the reports of promises created in this file.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureDiagnosticsTests {
    @Test func `the broken-promise hook fires once per broken promise and never for resolved ones`() {
        let reports = Locked<[FutureDiagnostics.BrokenPromise]>([])
        FutureDiagnostics.onBrokenPromise = { broken in
            if broken.site?.fileID == "FutureLibTests/FutureDiagnosticsTests.swift" {
                reports.withLock { $0.append(broken) }
            }
        }
        defer { FutureDiagnostics.onBrokenPromise = nil }

        var brokenLine = 0
        for _ in 0..<3 {
            brokenLine = #line + 1
            let promise = Promise<Int>()
            promise.future.onFailure(on: .synchronous) { _ in }
        }
        var resolvedLine = 0
        for index in 0..<3 {
            resolvedLine = #line + 1
            let promise = Promise<String>()
            switch index {
            case 0: promise.fulfill("done")
            case 1: promise.reject(SampleError())
            default: promise.resolve(with: Future(value: "forwarded"))
            }
        }
        let cancelled = CancellationRequest()
        let tokenLine = #line + 1
        let tokenFailed = Promise<Int>()
        _ = tokenFailed.future.map(cancellationToken: cancelled.token) { $0 }
        cancelled.cancel()  // cancels the map only: the promise itself is still unresolved
        _ = consume tokenFailed

        let seen = reports.value
        #expect(seen.filter { $0.site?.line == brokenLine }.count == 3)
        #expect(seen.allSatisfy { $0.site?.line != resolvedLine })
        #expect(seen.filter { $0.site?.line == tokenLine }.count == 1)
        #expect(seen.count == 4)
        #expect(seen.first?.valueType == "Int")
        #expect(seen.first?.description.hasSuffix("was dropped unresolved") == true)
    }

    @Test func `no hook is set by default, and a broken promise still fails its future`() {
        #expect(FutureDiagnostics.onBrokenPromise == nil)
        let future = Promise<Int>().future
        #expect(future.result.map { error in (try? error.get()) == nil } == true)
    }

    @Test func `the hook replaced is released outside the lock`() {
        // The replaced hook's capture reads the hook in its `deinit`: inside the lock, a deadlock.
        let released = Counter()
        let capture = ReadsHookOnDeinit(released)
        FutureDiagnostics.onBrokenPromise = { _ in capture.touch() }
        _ = consume capture
        FutureDiagnostics.onBrokenPromise = nil
        #expect(released.value == 1)
    }
}

/// A hook's capture that reads the hook when released.
private final class ReadsHookOnDeinit: Sendable {
    let released: Counter

    init(_ released: Counter) {
        self.released = released
    }

    func touch() {}

    deinit {
        _ = FutureDiagnostics.onBrokenPromise
        released.increment()
    }
}
