import FutureLibHTTPDeadline
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Properties of the two grammars over seeded random inputs: generated valid values (digits with leading zeros,
/// whitespace, signs, units) read as a reference model says, mutations of them never trap and stay in range, and
/// formatting round-trips without ever saying more time than there is. `FUTURELIB_PROPERTY_SEED` replays a seed;
/// `FUTURELIB_STRESS_ITERATIONS` sets the cases per property (`make stress`).
@Suite struct DeadlineHeaderPropertyTests {
    static let seed: UInt64 = environmentNumber("FUTURELIB_PROPERTY_SEED").map(UInt64.init) ?? 0x4445_4144_4C49_4E45
    static let cases = environmentNumber("FUTURELIB_STRESS_ITERATIONS") ?? 20_000

    @Test func `Property: generated Connect-Timeout-Ms values read as the model says`() {
        var random = SplitMix64(seed: Self.seed)
        print("DeadlineHeaderPropertyTests seed \(Self.seed)")
        for _ in 0..<Self.cases {
            let value = Generated.random(using: &random, units: [])
            let parsed = MillisecondsTimeout.parse(value.text)
            let expected = value.model(maximum: 9_999_999_999).map { Duration.milliseconds($0) }
            #expect(parsed == expected, "\(value.text.debugDescription)")
            if parsed != expected { return }
        }
    }

    @Test func `Property: generated grpc-timeout values read as the model says`() {
        var random = SplitMix64(seed: Self.seed &+ 1)
        let units: [Character: Duration] = [
            "H": .seconds(3_600), "M": .seconds(60), "S": .seconds(1), "m": .milliseconds(1), "u": .microseconds(1),
            "n": .nanoseconds(1),
        ]
        for _ in 0..<Self.cases {
            let value = Generated.random(using: &random, units: Array("HMSmunxs "))
            let parsed = GRPCTimeout.parse(value.text)
            let expected: Duration? = value.model(maximum: 99_999_999).flatMap { count in
                value.unit.flatMap { units[$0] }.map { $0 * Int(count) }
            }
            #expect(parsed == expected, "\(value.text.debugDescription)")
            if parsed != expected { return }
        }
    }

    @Test func `Property: any bytes parse without trapping, within range`() {
        var random = SplitMix64(seed: Self.seed &+ 2)
        let alphabet = Array(" \t0123456789-+.,eEHMSmun\u{0}\u{FF}\r\n٣")
        for _ in 0..<Self.cases {
            let length = Int(random.next() % 24)
            let text = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            if let timeout = MillisecondsTimeout.parse(text) {
                #expect(timeout >= .zero && timeout <= MillisecondsTimeout.maximum, "\(text.debugDescription)")
            }
            if let timeout = GRPCTimeout.parse(text) {
                #expect(timeout >= .zero && timeout <= .seconds(99_999_999 * 3_600), "\(text.debugDescription)")
            }
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let elements = lines.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            #expect(
                DeadlineHeader.connectTimeout.timeout(in: lines)
                    == elements.compactMap { MillisecondsTimeout.parse($0) }.min()
            )
        }
    }

    @Test func `Property: formatting never says more time than there is, and round-trips to the unit`() {
        var random = SplitMix64(seed: Self.seed &+ 3)
        for _ in 0..<Self.cases {
            // Durations from nanoseconds to beyond the grammars' maxima, and negative ones.
            let scale = Int64(1) << Int64(random.next() % 41)
            let duration =
                Duration.nanoseconds(Int64(random.next() % 1_000_000_000)) * Int(scale)
                * (random.next() % 8 == 0 ? -1 : 1)
            let clamped = max(duration, .zero)

            let milliseconds = MillisecondsTimeout.parse(MillisecondsTimeout.format(duration))!
            if clamped < MillisecondsTimeout.maximum {
                #expect(milliseconds <= clamped && clamped - milliseconds < .milliseconds(1), "\(duration)")
            } else {
                #expect(milliseconds == MillisecondsTimeout.maximum)
            }

            let grpc = GRPCTimeout.parse(GRPCTimeout.format(duration))!
            let grpcMaximum = Duration.seconds(9_999_999 * 3_600)
            #expect(grpc <= min(clamped, grpcMaximum), "\(duration)")
            #expect(GRPCTimeout.format(duration).count <= 8, "\(duration)")  // what grpc-swift-2 reads
            // Seven digits in the finest unit that fits: off by less than one part in 10⁴ (exact below 10 ms).
            if clamped >= grpcMaximum {
                #expect(grpc == grpcMaximum)
            } else if clamped < .nanoseconds(10_000_000) {
                #expect(grpc == clamped)
            } else {
                #expect((clamped - grpc) * 10_000 <= clamped, "\(duration) -> \(GRPCTimeout.format(duration))")
            }
        }
    }
}

/// A value of the grammar `[OWS] [sign] digits [unit] [OWS]`, with its parts, to compare the parser with a model.
private struct Generated {
    var text: String
    var sign: Character?
    var digits: String
    var unit: Character?

    static func random(using random: inout SplitMix64, units: [Character]) -> Generated {
        let whitespace = [" ", "\t", "", "", ""]
        let before = whitespace[Int(random.next() % 5)] + (random.next() % 4 == 0 ? " " : "")
        let after = whitespace[Int(random.next() % 5)]
        let sign: Character? = [nil, nil, nil, "-", "+"][Int(random.next() % 5)]
        let zeros = String(repeating: "0", count: Int(random.next() % 4 == 0 ? random.next() % 20 : 0))
        let length = Int(random.next() % 14)
        let digits = zeros + String((0..<length).map { _ in Character(String(random.next() % 10)) })
        let unit: Character? = units.isEmpty ? nil : units[Int(random.next() % UInt64(units.count))]
        let text = before + (sign.map(String.init) ?? "") + digits + (unit.map(String.init) ?? "") + after
        return Generated(text: text, sign: sign, digits: digits, unit: unit)
    }

    /// The count the grammar gives: nil without digits or with a `+`; a negative counts as zero; clamped.
    func model(maximum: Int64) -> Int64? {
        guard !digits.isEmpty, sign != "+" else { return nil }
        if let unit, unit == " " { return nil }  // whitespace between the digits and the unit
        if sign == "-" { return 0 }
        var value: Int64 = 0
        for digit in digits { value = min(maximum, value * 10 + Int64(String(digit))!) }
        return value
    }
}

/// A deterministic generator (SplitMix64), so that a failure replays from its seed.
private struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private func environmentNumber(_ name: String) -> Int? {
    guard let value = getenv(name) else { return nil }
    return Int(String(cString: value))
}
