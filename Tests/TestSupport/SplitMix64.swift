/// A small deterministic pseudo-random generator (Steele, Lea and Flood's SplitMix64), so a seed
/// names the same operation list on every platform and toolchain: the standard library's
/// `random(in:using:)` does not promise how it maps generator output to a range. The model tests
/// and the property tests (``Arbitrary``) draw from it.
package struct SplitMix64 {
    private var state: UInt64

    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (the tiny modulo bias does not matter here).
    package mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// True with probability `percent` / 100.
    package mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }
}
