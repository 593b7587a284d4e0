import AsyncHTTPClient
import FutureLibAsyncHTTPClient
import NIOCore
import NIOHTTP1
import Testing

/// `HTTPClientRequest.setDeadline(_:for:timeout:)`, what both `execute` forms do before they send, bullet by bullet
/// of its documentation, with hostile inputs: extreme timeouts, a cancelled token, values already on the request.
@Suite struct HTTPClientRequestDeadlineTests {
    private func header(
        for token: CancellationToken,
        timeout: TimeAmount,
        preset: [String] = [],
        header: DeadlineHeader = .connectTimeout
    ) -> [String] {
        var request = HTTPClientRequest(url: "http://127.0.0.1/")
        for value in preset { request.headers.add(name: header.name, value: value) }
        request.setDeadline(header, for: token, timeout: timeout)
        return request.headers[header.name]
    }

    @Test func `the smallest of the timeout, the token's time left and a value already there, rounded down`() {
        let clock = ManualClock()
        let deadline = CancellationRequest(cancelAfter: .milliseconds(2_500), clock: clock)
        #expect(header(for: deadline.token, timeout: .seconds(30)) == ["2500"])
        #expect(header(for: deadline.token, timeout: .microseconds(1_999)) == ["1"])
        #expect(header(for: .none, timeout: .seconds(30)) == ["30000"])
        #expect(header(for: deadline.token, timeout: .seconds(30), preset: ["700"]) == ["700"])  // never raised
        #expect(header(for: deadline.token, timeout: .seconds(30), preset: ["9000"]) == ["2500"])
        #expect(header(for: .none, timeout: .seconds(2), header: .grpcTimeout) == ["2000000u"])
    }

    @Test func `it replaces the header's field lines with one value: repeated, listed or garbage values`() {
        #expect(header(for: .none, timeout: .seconds(30), preset: ["900", "700, 800"]) == ["700"])
        #expect(header(for: .none, timeout: .seconds(30), preset: ["soon"]) == ["30000"])
        #expect(header(for: .none, timeout: .seconds(30), preset: ["0"]) == ["0"])
        #expect(header(for: .none, timeout: .seconds(30), preset: ["-5"]) == ["0"])
    }

    @Test func `a cancelled token sends 0, never nothing`() {
        #expect(header(for: .cancelled, timeout: .seconds(30)) == ["0"])
        let request = CancellationRequest()
        request.cancel()
        #expect(header(for: request.token, timeout: .seconds(30)) == ["0"])
    }

    @Test func `extreme timeouts have a meaning: clamped to the grammar's largest, or no time left`() {
        #expect(header(for: .none, timeout: .nanoseconds(.max)) == ["9999999999"])
        #expect(header(for: .none, timeout: .nanoseconds(.min)) == ["0"])
        #expect(header(for: .none, timeout: .nanoseconds(1)) == ["0"])
        #expect(header(for: .none, timeout: .zero) == ["0"])
        #expect(header(for: .none, timeout: .nanoseconds(.max), header: .grpcTimeout) == ["2562047H"])
    }
}
