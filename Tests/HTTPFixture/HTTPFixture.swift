// A small HTTP/1.1 server on 127.0.0.1 for the demo and the URLSession tests: real sockets, no
// mocks, nothing beyond loopback. A fixture, not a product: plain POSIX sockets, one thread per
// connection (bounded), one request per connection (`Connection: close`).
import Cancellation
package import Foundation  // package: `url(_:)` returns a `URL`
import FutureLibConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback HTTP/1.1 server with three endpoints, started on an ephemeral port.
///
/// - `GET /now?size=N` answers at once with `N` bytes (default 16), with `Content-Length`.
/// - `GET /slow?delay=MS&size=N` waits `MS` milliseconds, then answers like `/now`.
/// - `GET /stream?chunks=N&interval=MS&size=B` answers with `Transfer-Encoding: chunked`: `N`
///   chunks of `B` bytes, one every `MS` milliseconds.
///
/// Every request may carry `id=…` in its query; ``request(id:)`` then reports what the server
/// saw, in particular whether the client closed the connection before the reply was complete.
///
/// ```swift
/// let server = try HTTPFixture()
/// defer { server.stop() }
/// let url = server.url("/stream?chunks=100&interval=20&id=s1")
/// ```
package final class HTTPFixture: Sendable {
    /// The port the server listens on, on 127.0.0.1.
    package let port: Int

    private let listener: Int32
    private let wakePipe: (read: Int32, write: Int32)
    private let state: Lock<State>
    private let finished = DispatchGroup()
    private let onClientClosedEarly: (@Sendable (Request) -> Void)?

    /// At most this many connections are served at once; more get `503` and are closed.
    package static let maxConnections = 32

    /// Starts listening on 127.0.0.1 on a port the system picks.
    ///
    /// - Parameter onClientClosedEarly: Called (on a server thread) when a client closes its
    ///   connection before the reply was complete.
    /// - Throws: ``HTTPFixtureError/system(_:_:)`` when a socket call fails.
    package init(onClientClosedEarly: (@Sendable (Request) -> Void)? = nil) throws {
        self.onClientClosedEarly = onClientClosedEarly
        state = Lock(State())
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw HTTPFixtureError.system("pipe", errno) }
        wakePipe = (fds[0], fds[1])
        do {
            (listener, port) = try Self.openListener()
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "HTTPFixture accept"
        finished.enter()
        thread.start()
    }

    deinit {
        stop()
    }

    /// The URL of `pathAndQuery` on this server, e.g. `url("/now?size=10")`.
    package func url(_ pathAndQuery: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(pathAndQuery)")!
    }

    /// Stops accepting, wakes and ends every connection thread, and returns once all of them
    /// have finished. Idempotent. Do not call it from `onClientClosedEarly` (a server thread):
    /// it waits for that thread.
    package func stop() {
        let first = state.withLock { state in
            defer { state.isStopping = true }
            return !state.isStopping
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)  // the pipe stays readable: every poll wakes
        finished.wait()
        close(listener)
        close(wakePipe.read)
        close(wakePipe.write)
    }

    // MARK: - What the server saw

    /// What the server saw of one request.
    package struct Request: Sendable, Equatable {
        /// How far the reply got.
        package enum Outcome: Sendable, Equatable {
            /// The reply is still being sent.
            case inProgress
            /// The whole reply was sent.
            case completed
            /// The client closed the connection before the reply was complete.
            case clientClosedEarly
            /// ``HTTPFixture/stop()`` ended the reply before it was complete.
            case stoppedByServer
        }

        /// The `id` query parameter, if any.
        package let id: String?
        /// The request target, e.g. `/now?size=10`.
        package let target: String
        /// How far the reply got.
        package var outcome: Outcome
        /// How many body chunks were sent (one for replies with `Content-Length`).
        package var chunksSent: Int
    }

    /// Every request seen so far, in arrival order.
    package var requests: [Request] {
        state.withLock { $0.requests }
    }

    /// The last request whose query had `id=<id>`, or `nil` if none arrived.
    package func request(id: String) -> Request? {
        state.withLock { $0.requests.last { $0.id == id } }
    }

    /// Suspends until `condition` holds for the request with `id` (checking every 10 ms), or
    /// `timeout` passes: a bound that tells a hang from a slow run, so it is `timeout` of a quiet
    /// machine, up to ten times as long while the machine is loaded (the one-minute load average per
    /// processor). Returns whether it held.
    ///
    /// Two minutes by default: under a sanitizer on a small machine, with the race tests' threads
    /// running, a test's task can wait longer than a minute for a cooperative thread.
    package func eventually(
        id: String,
        timeout: Duration = .seconds(120),
        _ condition: (Request) -> Bool
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout * Self.slowdown
        while ContinuousClock.now < deadline {
            if let request = request(id: id), condition(request) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return request(id: id).map(condition) ?? false
    }

    /// The one-minute load average per processor, at least 1, at most 10.
    private static var slowdown: Double {
        var load = [0.0]
        guard getloadavg(&load, 1) == 1 else { return 1 }
        let perProcessor = load[0] / Double(max(1, ProcessInfo.processInfo.activeProcessorCount))
        return perProcessor > 1 ? min(perProcessor, 10) : 1  // 1 for NaN too
    }

    // MARK: - Accepting

    private struct State {
        var isStopping = false
        var openConnections = 0
        var requests: [Request] = []
    }

    private static func openListener() throws -> (Int32, Int) {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw HTTPFixtureError.system("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0  // ephemeral
        address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)  // 127.0.0.1 only
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 64) == 0
                    && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(fd)
            throw HTTPFixtureError.system("bind/listen", code)
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    private func acceptLoop() {
        defer { finished.leave() }
        while waitReadable(listener, timeout: -1) {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                usleep(1000)  // out of descriptors, say: do not spin
                continue
            }
            let admitted = state.withLock { state in
                guard state.openConnections < Self.maxConnections else { return false }
                state.openConnections += 1
                return true
            }
            guard admitted else {
                _ = sendAll(
                    connection,
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
                close(connection)
                continue
            }
            finished.enter()
            let thread = Thread { [self] in
                serve(connection)
                close(connection)
                state.withLock { $0.openConnections -= 1 }
                finished.leave()
            }
            thread.name = "HTTPFixture connection"
            thread.start()
        }
    }

    /// Waits until `fd` is readable (or closed by the peer) for at most `timeout` milliseconds
    /// (`-1`: no limit). Returns `false` when the server is stopping or the time ran out.
    private func waitReadable(_ fd: Int32, timeout: Int32) -> Bool {
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&fds, 2, timeout)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 || fds[1].revents != 0 { return false }
            return true
        }
    }

    // MARK: - Serving one request

    private func serve(_ connection: Int32) {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        guard let head = readHead(connection) else { return }
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            _ = sendAll(connection, Self.head(status: "400 Bad Request", headers: ["Content-Length: 0"]))
            return
        }
        guard parts[0] == "GET" else {
            _ = sendAll(connection, Self.head(status: "405 Method Not Allowed", headers: ["Content-Length: 0"]))
            return
        }
        let target = String(parts[1])
        let components = URLComponents(string: target)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        func number(_ name: String, _ fallback: Int) -> Int {
            query[name].flatMap { Int($0) }.map { max(0, $0) } ?? fallback
        }

        let index = state.withLock { state in
            state.requests.append(Request(id: query["id"], target: target, outcome: .inProgress, chunksSent: 0))
            return state.requests.count - 1
        }
        let outcome: Request.Outcome
        switch components?.path {
        case "/now":
            outcome = reply(connection, index, bytes: number("size", 16))
        case "/slow":
            outcome =
                pause(connection, milliseconds: number("delay", 1000))
                ?? reply(connection, index, bytes: number("size", 16))
        case "/stream":
            outcome = stream(
                connection,
                index,
                chunks: number("chunks", 10),
                interval: number("interval", 100),
                bytes: number("size", 64)
            )
        default:
            _ = sendAll(connection, Self.head(status: "404 Not Found", headers: ["Content-Length: 0"]))
            outcome = .completed
        }
        let request = state.withLock { state in
            state.requests[index].outcome = outcome
            return state.requests[index]
        }
        if outcome == .clientClosedEarly { onClientClosedEarly?(request) }
    }

    /// Reads up to the blank line that ends the request head (at most 16 KiB, 10 s).
    private func readHead(_ connection: Int32) -> String? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while received.count < 16 * 1024 {
            guard waitReadable(connection, timeout: 10_000) else { return nil }
            let count = recv(connection, &buffer, buffer.count, 0)
            if count <= 0 { return nil }
            received += buffer[0..<count]
            if let range = received.firstRange(of: end) {
                return String(decoding: received[..<range.lowerBound], as: UTF8.self)
            }
        }
        return nil
    }

    /// Sends a `Content-Length` reply of `bytes` bytes.
    private func reply(_ connection: Int32, _ index: Int, bytes: Int) -> Request.Outcome {
        let body = String(repeating: "x", count: bytes)
        let head = Self.head(status: "200 OK", headers: ["Content-Type: text/plain", "Content-Length: \(bytes)"])
        guard sendAll(connection, head + body) else { return .clientClosedEarly }
        state.withLock { $0.requests[index].chunksSent = 1 }
        return .completed
    }

    /// Sends `chunks` chunks of `bytes` bytes, `interval` ms apart, then the last chunk.
    private func stream(_ connection: Int32, _ index: Int, chunks: Int, interval: Int, bytes: Int) -> Request.Outcome {
        let head = Self.head(status: "200 OK", headers: ["Content-Type: text/plain", "Transfer-Encoding: chunked"])
        guard sendAll(connection, head) else { return .clientClosedEarly }
        let chunk = String(bytes, radix: 16) + "\r\n" + String(repeating: "x", count: bytes) + "\r\n"
        for _ in 0..<chunks {
            if let early = pause(connection, milliseconds: interval) { return early }
            guard bytes == 0 || sendAll(connection, chunk) else { return .clientClosedEarly }
            state.withLock { $0.requests[index].chunksSent += 1 }
        }
        return sendAll(connection, "0\r\n\r\n") ? .completed : .clientClosedEarly
    }

    /// Waits `milliseconds`, watching the connection: returns `.clientClosedEarly` as soon as the
    /// client closes it (`.stoppedByServer` when the server stops), `nil` when the time is up.
    private func pause(_ connection: Int32, milliseconds: Int) -> Request.Outcome? {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            let (seconds, attoseconds) = left.components
            let timeout = Int32(min(seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            guard waitReadable(connection, timeout: timeout) else {
                if state.withLock({ $0.isStopping }) { return .stoppedByServer }
                continue
            }
            // The client sends nothing more after its request: readable means closed (0 or error).
            let count = recv(connection, &buffer, buffer.count, 0)
            if count <= 0 { return .clientClosedEarly }
        }
    }

    private static func head(status: String, headers: [String]) -> String {
        (["HTTP/1.1 \(status)", "Connection: close"] + headers).joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// Sends all of `text`; `false` when the client closed the connection.
    private func sendAll(_ connection: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)
        var offset = 0
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        while offset < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                send(connection, buffer.baseAddress! + offset, buffer.count - offset, flags)
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return false }
            offset += count
        }
        return true
    }
}

/// A system call of ``HTTPFixture`` failed.
package enum HTTPFixtureError: Error, Sendable {
    /// `call` failed with `errno` `code`.
    case system(_ call: String, _ code: Int32)
}
