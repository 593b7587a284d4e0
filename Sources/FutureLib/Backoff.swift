/// How long ``Future/retry(maxAttempts:backoff:clock:on:cancellationToken:shouldRetry:_:)-(_,_,_,ExecutionContext,_,_,_)`` waits
/// before each new attempt: a constant delay, or one that grows exponentially up to a cap,
/// optionally with random jitter.
///
/// ```swift
/// let backoff = Backoff.exponential(initial: .milliseconds(100), maximum: .seconds(5)).jittered()
/// // retries after about 100 ms, 200 ms, 400 ms, … 5 s, each scaled by a random factor in 0..<1
/// ```
///
/// ### Jitter
/// ``jittered(by:random:)`` scales each delay by `1 - fraction × r`, with `r` drawn from
/// `random` in `0..<1`: `fraction` 1 ("full jitter") spreads the delays over `0..<delay`, so that
/// many clients failing together do not retry together. Tests inject `random` to get fixed delays.
public struct Backoff: Sendable {
    @usableFromInline
    enum Growth: Sendable {
        case constant(Duration)
        case exponential(initial: Duration, multiplier: Double, maximum: Duration)
    }

    @usableFromInline let growth: Growth
    @usableFromInline let jitter: Double
    @usableFromInline let random: @Sendable () -> Double

    init(growth: Growth, jitter: Double = 0, random: @escaping @Sendable () -> Double = Backoff.systemRandom) {
        self.growth = growth
        self.jitter = jitter
        self.random = random
    }

    /// The system's random number generator, in `0..<1`.
    @usableFromInline static let systemRandom: @Sendable () -> Double = { Double.random(in: 0..<1) }

    /// Retries at once, without waiting.
    ///
    /// ```swift
    /// let page = Future.retry(maxAttempts: 2, backoff: .immediate) { token in fetch(url, cancellationToken: token) }
    /// ```
    public static var immediate: Backoff { Backoff(growth: .constant(.zero)) }

    /// Waits `delay` before every retry.
    ///
    /// ```swift
    /// let backoff = Backoff.constant(.seconds(1))
    /// ```
    ///
    /// - Parameter delay: The delay. Negative delays count as zero.
    /// - Returns: The policy.
    public static func constant(_ delay: Duration) -> Backoff {
        Backoff(growth: .constant(delay))
    }

    /// Waits `initial` before the first retry, and `multiplier` times longer before each next
    /// one, never longer than `maximum`.
    ///
    /// ```swift
    /// let backoff = Backoff.exponential(initial: .milliseconds(50), maximum: .seconds(2))
    /// // 50 ms, 100 ms, 200 ms, …, 2 s, 2 s
    /// ```
    ///
    /// - Parameters:
    ///   - initial: The delay before the first retry.
    ///   - multiplier: How much each delay grows; at least 1. Defaults to 2.
    ///   - maximum: The cap.
    /// - Returns: The policy.
    public static func exponential(initial: Duration, multiplier: Double = 2, maximum: Duration) -> Backoff {
        precondition(multiplier >= 1, "Backoff.exponential: multiplier must be at least 1, got \(multiplier)")
        return Backoff(growth: .exponential(initial: initial, multiplier: multiplier, maximum: maximum))
    }

    /// This policy with each delay scaled by a random factor in `1 - fraction ..< 1`.
    ///
    /// ```swift
    /// let backoff = Backoff.constant(.seconds(1)).jittered(by: 0.5)  // 0.5 s ..< 1 s
    /// let fixed = Backoff.constant(.seconds(1)).jittered(random: { 0.25 })  // always 0.75 s
    /// ```
    ///
    /// - Parameters:
    ///   - fraction: How much of each delay may be taken away, in `0...1`. Defaults to 1 ("full jitter").
    ///   - random: A source of numbers in `0..<1`; the system's random generator by default.
    /// - Returns: The policy with jitter.
    public func jittered(
        by fraction: Double = 1,
        random: @escaping @Sendable () -> Double = Backoff.systemRandom
    ) -> Backoff {
        precondition((0...1).contains(fraction), "Backoff.jittered: fraction must be in 0...1, got \(fraction)")
        return Backoff(growth: growth, jitter: fraction, random: random)
    }

    /// The delay before retry number `retry` (1 for the retry after the first failed attempt).
    ///
    /// ```swift
    /// let backoff = Backoff.exponential(initial: .seconds(1), maximum: .seconds(3))
    /// #expect(backoff.delay(beforeRetry: 2) == .seconds(2))
    /// #expect(backoff.delay(beforeRetry: 5) == .seconds(3))
    /// ```
    ///
    /// - Parameter retry: Which retry, from 1.
    /// - Returns: The delay, never negative.
    public func delay(beforeRetry retry: Int) -> Duration {
        var delay: Duration
        switch growth {
        case .constant(let constant):
            delay = constant
        case .exponential(let initial, let multiplier, let maximum):
            delay = initial
            var step = 1
            while step < retry, delay < maximum {
                // Compared in seconds first: `Duration * Double` traps when the product leaves
                // Duration's range (a huge or infinite multiplier, many retries).
                guard delay.inSeconds * multiplier < maximum.inSeconds else {
                    delay = maximum
                    break
                }
                delay = delay * multiplier
                step += 1
            }
            delay = min(delay, maximum)
        }
        if jitter > 0 {
            let r = min(max(random(), 0), 1)
            delay = delay * (1 - jitter * r)
        }
        return max(delay, .zero)
    }
}

extension Duration {
    /// The duration in seconds, as a `Double` (which never overflows, unlike `Duration` arithmetic).
    fileprivate var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
