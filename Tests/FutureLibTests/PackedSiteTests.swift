import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// A pending future keeps its promise's creation site in one word and the file ID's length beside
/// its lock (`Internal/PackedSite.swift`), or whole in a box when it does not fit: the
/// broken-promise error and the debug description name the same site either way. A line above
/// 65,535 takes the box; so would an address of 48 bits or more, which no platform gives a string
/// literal today (see `PackedSite`) and a test cannot make: it takes the same box, this path.
@Suite struct PackedSiteTests {
    /// The site that a dropped promise created at `fileID`:`line` reports.
    func brokenSite(fileID: StaticString, line: UInt) -> (site: CreationSite?, description: String) {
        var promise: Promise<Int>? = Promise(fileID: fileID, line: line)
        let future = promise!.future
        let description = future.debugDescription
        promise = nil
        guard case .failure(FutureError.brokenPromise(let site))? = future.result else {
            Issue.record("expected brokenPromise, got \(String(describing: future.result))")
            return (nil, description)
        }
        return (site, description)
    }

    @Test(arguments: [1, 42, 65_535])
    func `a site that packs is reported whole`(line: Int) {
        let (site, description) = brokenSite(fileID: "Module/Packed.swift", line: UInt(line))
        #expect(site?.fileID == "Module/Packed.swift")
        #expect(site?.line == line)
        #expect(description.contains("promise created at Module/Packed.swift:\(line)"))
    }

    @Test(arguments: [65_536, 1_000_000])
    func `a line beyond 16 bits is kept in a box and reported whole`(line: Int) {
        let (site, description) = brokenSite(fileID: "Module/Boxed.swift", line: UInt(line))
        #expect(site?.fileID == "Module/Boxed.swift")
        #expect(site?.line == line)
        #expect(description.contains("promise created at Module/Boxed.swift:\(line)"))
    }

    @Test func `a promise's future with continuations and a boxed site completes them`() {
        let promise = Promise<Int>(fileID: "Module/Boxed.swift", line: 70_000)
        let seen = Counter()
        for _ in 0..<3 { promise.future.onSuccess(on: .synchronous) { _ in seen.increment() } }
        #expect(promise.future.debugDescription.contains("3 continuations waiting"))
        promise.fulfill(2)
        #expect(seen.value == 3)
    }
}
