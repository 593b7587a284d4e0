/// Where in the source a ``Promise`` was created: the file (as `#fileID` spells it) and the line.
///
/// ``FutureError/brokenPromise(createdAt:)`` carries it, so the error of a dropped promise points
/// at the code that made the promise:
///
/// ```swift
/// do {
///     _ = try await Promise<Int>().future.value()
/// } catch FutureError.brokenPromise(let site?) {
///     print("dropped the promise made at \(site)")  // "MyApp/Loader.swift:42"
/// }
/// ```
///
/// ### Cost
/// Capturing a site stores a pointer to the compiler's static string, its length and the line:
/// 16 bytes, no allocation and no `String`. The strings are built only when ``fileID`` or
/// ``description`` is read.
public struct CreationSite: Sendable, Hashable, CustomStringConvertible {
    // Sendable: the address of a `StaticString`'s UTF-8, which is immutable and lives as long as
    // the program; kept as an integer so that the struct stays a plain value.
    @usableFromInline let fileAddress: UInt
    @usableFromInline let fileCount: UInt32
    @usableFromInline let lineNumber: UInt32

    /// Captures a site; `fileID` is what `#fileID` gives, `line` what `#line` gives.
    ///
    /// ```swift
    /// let site = CreationSite()  // this file and line
    /// ```
    ///
    /// - Parameters:
    ///   - fileID: The file, as `#fileID` spells it (`Module/File.swift`).
    ///   - line: The line.
    @inlinable
    public init(fileID: StaticString = #fileID, line: UInt = #line) {
        if fileID.hasPointerRepresentation {
            fileAddress = UInt(bitPattern: fileID.utf8Start)
            fileCount = UInt32(truncatingIfNeeded: fileID.utf8CodeUnitCount)
        } else {
            fileAddress = 0  // a one-scalar literal: never what `#fileID` gives
            fileCount = 0
        }
        lineNumber = UInt32(truncatingIfNeeded: line)
    }

    /// No site: what a pending future that no ``Promise`` completes keeps in its place.
    @inlinable
    static var unknown: CreationSite {
        CreationSite(fileAddress: 0, fileCount: 0, lineNumber: 0)
    }

    @inlinable
    init(fileAddress: UInt, fileCount: UInt32, lineNumber: UInt32) {
        self.fileAddress = fileAddress
        self.fileCount = fileCount
        self.lineNumber = lineNumber
    }

    /// The file, as `#fileID` spells it: `Module/File.swift`.
    ///
    /// ```swift
    /// #expect(CreationSite().fileID.hasSuffix(".swift"))
    /// ```
    public var fileID: String {
        guard let start = UnsafePointer<UInt8>(bitPattern: fileAddress) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: start, count: Int(fileCount)), as: UTF8.self)
    }

    /// The line.
    ///
    /// ```swift
    /// let line = CreationSite().line
    /// ```
    public var line: Int { Int(lineNumber) }

    /// `Module/File.swift:42`.
    ///
    /// ```swift
    /// print(CreationSite())  // "MyApp/Main.swift:7"
    /// ```
    public var description: String { "\(fileID):\(line)" }
}
