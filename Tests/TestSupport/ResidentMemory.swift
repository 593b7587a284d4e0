import Foundation

/// The resident set of this process in bytes, from `/proc/self/statm`; nil where there is none
/// (not Linux). For the scale tests that check that memory does not grow.
package func residentBytes() -> Int? {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
