/// A promise's ``CreationSite`` in one word, for its future's pending state: the address of the
/// file ID's UTF-8 in the low 48 bits and the line in the high 16. The file ID's length, the
/// site's third part, is kept by the future beside its lock (`Future.siteFileCount`), in two
/// bytes that were padding.
///
/// What it buys: a 16-byte ``CreationSite`` beside the continuation would make the pending state
/// 33 bytes and a `Future<Int>` 57, one malloc size class above 64; packed, the future is 56 bytes
/// (guarded by callgrind `mallinfo-futurelib`).
///
/// ### Portability: which addresses fit in 48 bits
///
/// The address is that of a `StaticString` literal (`#fileID`), which lives in the read-only data
/// of a loaded image, never on the heap:
/// - 32-bit platforms (armv7, arm64_32, i386, wasm32): every address fits.
/// - x86_64 (Linux, Windows, Darwin): user space ends below 2⁴⁷ with 4-level paging. With 5-level
///   paging (LA57) Linux still maps nothing above 2⁴⁷ unless a process asks for it with an `mmap`
///   hint, which the loader does not.
/// - arm64 (Linux, Android, Darwin): user addresses have at most 48 bits (Linux's 52-bit address
///   space, like LA57, only on request; Darwin's are below 2⁴⁷). Tagged pointers (Android's top-
///   byte tags, MTE) are heap pointers; pointer authentication signs code pointers, not this one.
/// - Anything else (s390x, ppc64le, a future address space): whatever the address, it is checked.
///
/// A site that does not fit (an address of 48 bits or more, a line above 65,535, a file ID longer
/// than 65,535 bytes) is kept whole in a ``SiteBox``: one more allocation per promise, only for
/// such sites, and the broken-promise error names the same site either way. So the packing is a
/// size optimisation, never a correctness assumption (`PackedSiteTests` covers both paths).
@usableFromInline
struct PackedSite: Sendable {
    @usableFromInline let bits: UInt64

    @inlinable
    init(bits: UInt64) {
        self.bits = bits
    }

    /// No site: a future that no promise completes.
    @inlinable
    static var unknown: PackedSite { PackedSite(bits: 0) }

    /// `site` packed, with the length of its file ID to keep beside it; nil when it does not fit.
    @inlinable
    static func pack(_ site: CreationSite) -> (site: PackedSite, fileCount: UInt16)? {
        let address = UInt64(site.fileAddress)
        guard address >> 48 == 0, site.lineNumber <= UInt16.max, site.fileCount <= UInt16.max else {
            return nil
        }
        return (PackedSite(bits: address | UInt64(site.lineNumber) << 48), UInt16(site.fileCount))
    }

    /// The site, given the length of its file ID.
    @inlinable
    func unpacked(fileCount: UInt16) -> CreationSite {
        CreationSite(
            fileAddress: UInt(truncatingIfNeeded: bits & 0xFFFF_FFFF_FFFF),
            fileCount: bits & 0xFFFF_FFFF_FFFF == 0 ? 0 : UInt32(fileCount),
            lineNumber: UInt32(truncatingIfNeeded: bits >> 48)
        )
    }
}

/// A creation site that ``PackedSite`` cannot hold (an allocation, only for such sites).
@usableFromInline
final class SiteBox: Sendable {
    @usableFromInline let site: CreationSite

    @inlinable
    init(_ site: CreationSite) {
        self.site = site
    }
}
