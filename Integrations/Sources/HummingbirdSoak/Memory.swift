// What the soak reads of its own memory: the resident set from the kernel, and the heap as glibc's malloc counts
// it, which tells a leak (the heap in use grows) from the allocator (the resident set moves while the heap in use
// stays flat).
import Foundation
import MallocInfo

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One reading of the process's memory.
struct MemoryReading {
    /// The resident set, from /proc/self/statm (0 where there is none).
    var resident: Int
    /// Heap bytes in use (`mallinfo2`: allocated chunks and mapped large blocks; 0 without glibc).
    var heapInUse: Int
    /// Bytes malloc holds in free chunks (`mallinfo2().fordblks`).
    var heapFree: Int

    /// Reads it now.
    static func now() -> MemoryReading {
        MemoryReading(
            resident: residentBytes(),
            heapInUse: Int(malloc_info_bytes_in_use()),
            heapFree: Int(malloc_info_bytes_free())
        )
    }

    /// Gives malloc's free memory back to the system (`malloc_trim(0)`), then reads it.
    static func afterTrim() -> MemoryReading {
        _ = malloc_info_trim()
        return now()
    }

    private static func residentBytes() -> Int {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// `2,345 KB` (kibibytes), signed when asked: for the heap, whose changes are small.
func kilobytes(_ bytes: Int, signed: Bool = false) -> String {
    let kib = (abs(bytes) + 512) >> 10
    let digits = String(kib)
    var grouped = ""
    for (offset, digit) in digits.enumerated() {
        if offset > 0, (digits.count - offset) % 3 == 0 { grouped.append(",") }
        grouped.append(digit)
    }
    let sign = bytes < 0 ? "-" : (signed ? "+" : "")
    return "\(sign)\(grouped) KB"
}

/// `12.3 MB` (mebibytes, one decimal), signed when asked.
func megabytes(_ bytes: Int, signed: Bool = false) -> String {
    let tenths = (abs(bytes) * 10 + (1 << 19)) >> 20
    let sign = bytes < 0 ? "-" : (signed ? "+" : "")
    return "\(sign)\(tenths / 10).\(tenths % 10) MB"
}
