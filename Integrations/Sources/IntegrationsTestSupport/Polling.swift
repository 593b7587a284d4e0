#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// What the application tests and soaks share besides their servers: polling for a condition, a count from the
// environment, the resident set.

/// Polls `condition` every few milliseconds until it holds or `limit` passes.
///
/// - Parameters:
///   - limit: How long to wait at most; generous, since the machine may be loaded.
///   - condition: What to wait for.
/// - Returns: Whether `condition` held before the limit.
public func waitUntil(limit: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
    let end = ContinuousClock.now + limit
    while ContinuousClock.now < end {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// The integer in the environment variable `name`, if it holds one.
///
/// - Parameter name: The variable, such as `FUTURELIB_VAPOR_SOAK_REQUESTS`.
/// - Returns: Its value, or nil.
public func environmentInteger(_ name: String) -> Int? {
    guard let value = getenv(name) else { return nil }
    return Int(String(cString: value))
}

/// The resident set in bytes, from /proc/self/statm (0 where there is none).
///
/// - Returns: The process's resident set size.
public func residentBytes() -> Int {
    let file = open("/proc/self/statm", O_RDONLY)
    guard file >= 0 else { return 0 }
    defer { close(file) }
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = read(file, &buffer, buffer.count)
    guard count > 0 else { return 0 }
    // "size resident shared …", in pages.
    let fields = String(decoding: buffer[..<count], as: UTF8.self).split(separator: " ")
    let pages = fields.dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// `duration` scaled by the machine's load: times the one-minute load average per processor when that is above 1.
///
/// A limit for a wait that guards against a hang, so that a loaded machine does not fail it; never a timing.
///
/// - Parameter duration: The limit on a quiet machine.
/// - Returns: The limit now.
public func loadScaled(_ duration: Duration) -> Duration {
    var load = 0.0
    guard getloadavg(&load, 1) == 1 else { return duration }
    let processors = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    return duration * max(1, load / Double(processors))
}
