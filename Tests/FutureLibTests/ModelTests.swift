import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// Model-based random testing: seeded random operation lists (register, unregister, cancel,
/// cancel(after:), link, fulfil, reject, continuations with tokens, map/flatMap/recover/zip)
/// run on three threads at once and checked against a reference model (`Model/ModelCheck.swift`).
///
/// `make test` runs a fixed set of seeds; `make stress` runs 10,000 (`FUTURELIB_MODEL_SEEDS`).
/// A failure prints its seed and operations; replay it with
/// `FUTURELIB_MODEL_SEED=1234 swift test --filter Model`.
@Suite(.serialized, .timeLimit(.minutes(HangLimit.minutes(30))))
struct ModelTests {
    static let defaultSeeds = Sanitizer.isActive ? 50 : 150

    @Test func `random operation sequences on three threads match the reference model`() async {
        let failures = await ModelRunner.run(seeds: ModelRunner.seeds(defaultCount: Self.defaultSeeds))
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }

    @Test func `a seed always generates the same operations`() {
        let first = ModelScenario(seed: 1234).description
        let second = ModelScenario(seed: 1234).description
        #expect(first == second)
        #expect(first != ModelScenario(seed: 1235).description)
    }
}
