import Cancellation
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a process of the demo writes: one line per event, with the machine's monotonic clock (the same in every
/// process), so that `Scripts/demo-services-timeline.py` can merge the four processes' lines into one timeline.
///
/// A line is `<nanoseconds>\t<role>\t<label>\t<kind>\t<text>`: `label` names the request (`a`, `b`, `c1`, …), `kind`
/// is `mark` for the moment a scenario's times are measured from (the client gave up, sent the request, signalled
/// the edge) and `event` for the rest.
struct Timeline: Sendable {
    let role: String

    /// The machine's uptime clock, in nanoseconds: one clock for every process of the machine.
    static var now: UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }

    func event(_ label: String, _ text: String) {
        emit(label, "event", text)
    }

    func mark(_ label: String, _ text: String) {
        emit(label, "mark", text)
    }

    /// One `write(2)` per line, unbuffered: lines of a process that is killed are not lost.
    private func emit(_ label: String, _ kind: String, _ text: String) {
        var line = "\(Self.now)\t\(role)\t\(label)\t\(kind)\t\(text)\n"
        line.withUTF8 { bytes in
            _ = write(1, bytes.baseAddress, bytes.count)
        }
    }
}

/// `12.3 ms`, or `none`.
func milliseconds(_ duration: Duration?) -> String {
    guard let duration else { return "none" }
    let (seconds, attoseconds) = duration.components
    let tenths = seconds * 10_000 + attoseconds / 100_000_000_000_000
    return "\(tenths / 10).\(abs(tenths % 10)) ms"
}

/// The name of the type of `token`'s reason.
func reasonName(_ token: CancellationToken) -> String {
    token.cancellationReason.map { String(describing: type(of: $0)) } ?? "none"
}
