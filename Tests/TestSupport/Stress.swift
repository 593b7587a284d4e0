import Foundation

/// Iteration counts for the race tests. `make test` runs every race at a small count, enough to
/// hit each interleaving many times on 2 cores; `make stress` runs them at full size, with the
/// environment variable `FUTURELIB_STRESS_ITERATIONS` (100,000 there).
package enum Stress {
    /// `FUTURELIB_STRESS_ITERATIONS`, if set to a positive number.
    package static let override: Int? = ProcessInfo.processInfo.environment["FUTURELIB_STRESS_ITERATIONS"]
        .flatMap { Int($0) }
        .flatMap { $0 > 0 ? $0 : nil }

    /// Iterations for a cheap race (a few atomic operations per round): 1,000, or 200 under a
    /// sanitizer (``Sanitizer/isActive``), which runs them far slower.
    package static var cheap: Int { override ?? defaultCheap }

    private static let defaultCheap = Sanitizer.isActive ? 200 : 1_000

    /// Iterations for a heavy race (many handlers or threads per round): a tenth of `cheap`, at
    /// least 100.
    package static var heavy: Int { max(override.map { $0 / 10 } ?? 100, 100) }
}

/// Runs `iterations` rounds of a race between `actions.count` dedicated threads.
///
/// Each round, thread 0 calls `setup`, then every thread is released through a barrier and runs its
/// action on the round's state, then (after a second barrier) thread 0 calls `check`, which
/// returns a failure description or nil. Suspends until done and returns the first failures
/// (assert on them in the test body: `#expect` is not meant for foreign threads).
package func race<State: Sendable>(
    iterations: Int,
    setup: @escaping @Sendable () -> State,
    actions: [@Sendable (State) -> Void],
    check: @escaping @Sendable (State) -> String?
) async -> [String] {
    let failures = Locked<[String]>([])
    let current = Locked<State?>(nil)
    let barrier = SpinBarrier(parties: actions.count)
    await onThreads(actions.count) { index in
        let action = actions[index]
        for round in 0..<iterations {
            if index == 0 { current.withLock { $0 = setup() } }
            barrier.arriveAndWait()
            let state = current.value!
            action(state)
            barrier.arriveAndWait()
            if index == 0, let failure = check(state) {
                failures.withLock { if $0.count < 10 { $0.append("round \(round): \(failure)") } }
            }
        }
    }
    return failures.value
}

/// Sizes of the scale tests: full size (a million) under `make stress`; a tenth of it in
/// `make test`; far less under a sanitizer (``Sanitizer/isActive``), which runs such loops many
/// times slower and would starve the other tests of CPU. The depth that matters for the stack
/// (recursion overflowed a 512 KB stack near 1,400 frames) is reached either way.
package enum Scale {
    package static let million = Stress.override != nil ? 1_000_000 : Sanitizer.isActive ? 20_000 : 100_000
    package static let hundredThousand = Stress.override != nil ? 100_000 : Sanitizer.isActive ? 5_000 : 20_000
    package static let tenThousand = Sanitizer.isActive ? 1_000 : 10_000
}

/// Whether this test process runs under ThreadSanitizer or AddressSanitizer.
///
/// Told at run time, from the symbols their runtimes add to the process, so that the test suite is
/// built exactly as a user builds it (`swift test --sanitize=thread`, no other flag).
package enum Sanitizer {
    /// Whether it is AddressSanitizer: its LeakSanitizer check at exit also runs in exit tests' children.
    package static let isAddress: Bool = {
        guard let process = dlopen(nil, RTLD_NOW) else { return false }
        return dlsym(process, "__asan_init") != nil
    }()

    package static let isActive: Bool = {
        guard let process = dlopen(nil, RTLD_NOW) else { return false }
        return dlsym(process, "__tsan_init") != nil || dlsym(process, "__asan_init") != nil
    }()
}

/// Minutes for a suite's `.timeLimit`, which guards against a hang and never measures a time.
///
/// `minutes` is what the suite needs on a quiet machine, with room to spare. The limit is twice
/// that, because a test's time also counts its wait for ``HeavyGate`` behind every other suite's
/// heavy work; times the load per processor when the run started (``LoadScaledClock/slowdown``, at
/// most ``LoadScaledClock/maximumSlowdown``), so that a machine busy with other builds does not
/// turn a slow run into a failure, and a hang still fails in bounded time; and forty times
/// under `make stress`, whose iteration counts and sizes are ten to a hundred times those of
/// `make test`. Used as `@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))`.
package enum HangLimit {
    package static func minutes(_ minutes: Int) -> Int {
        guard Stress.override == nil else { return minutes * 40 }
        return Int((Double(minutes * 2) * slowdownAtStart).rounded(.up))
    }

    private static let slowdownAtStart = LoadScaledClock.slowdown
}
