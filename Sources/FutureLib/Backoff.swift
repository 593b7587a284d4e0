#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
///
/// ### Every number has a meaning
/// No argument traps and no delay costs more than a few operations, whatever the retry number:
/// negative delays count as zero; a `multiplier` below 1 (or NaN) counts as 1; a jitter `fraction`
/// outside `0...1` is clamped into it (NaN: no jitter); a `random` source that returns a value
/// outside `0...1` is clamped into it, and NaN counts as 0 (the full delay).
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
    ///   - initial: The delay before the first retry. Negative delays count as zero.
    ///   - multiplier: How much each delay grows. Defaults to 2; below 1, or NaN, counts as 1.
    ///   - maximum: The cap. Negative counts as zero; an `initial` above it counts as `maximum`.
    /// - Returns: The policy.
    public static func exponential(initial: Duration, multiplier: Double = 2, maximum: Duration) -> Backoff {
        let maximum = max(maximum, .zero)
        return Backoff(
            growth: .exponential(
                initial: min(max(initial, .zero), maximum),
                multiplier: multiplier >= 1 ? multiplier : 1,  // NaN too
                maximum: maximum
            )
        )
    }

    /// This policy with each delay scaled by a random factor in `1 - fraction ..< 1`.
    ///
    /// ```swift
    /// let backoff = Backoff.constant(.seconds(1)).jittered(by: 0.5)  // 0.5 s ..< 1 s
    /// let fixed = Backoff.constant(.seconds(1)).jittered(random: { 0.25 })  // always 0.75 s
    /// ```
    ///
    /// - Parameters:
    ///   - fraction: How much of each delay may be taken away, in `0...1` (clamped into it; NaN
    ///     counts as 0). Defaults to 1 ("full jitter").
    ///   - random: A source of numbers in `0..<1`; the system's random generator by default. What
    ///     it returns outside `0...1` is clamped into it; NaN counts as 0.
    /// - Returns: The policy with jitter.
    public func jittered(
        by fraction: Double = 1,
        random: @escaping @Sendable () -> Double = Backoff.systemRandom
    ) -> Backoff {
        Backoff(growth: growth, jitter: Self.unitInterval(fraction), random: random)
    }

    /// `value` clamped into `0...1`; NaN is 0.
    @usableFromInline
    static func unitInterval(_ value: Double) -> Double {
        value > 0 ? min(value, 1) : 0
    }

    /// The delay before retry number `retry` (1 for the retry after the first failed attempt).
    ///
    /// ```swift
    /// let backoff = Backoff.exponential(initial: .seconds(1), maximum: .seconds(3))
    /// #expect(backoff.delay(beforeRetry: 2) == .seconds(2))
    /// #expect(backoff.delay(beforeRetry: 5) == .seconds(3))
    /// ```
    ///
    /// It costs the same whatever `retry` is, up to `Int.max`.
    ///
    /// - Parameter retry: Which retry, from 1; below 1 counts as 1.
    /// - Returns: The delay, from zero to the maximum.
    public func delay(beforeRetry retry: Int) -> Duration {
        var delay: Duration
        switch growth {
        case .constant(let constant):
            delay = max(constant, .zero)
        case .exponential(let initial, let multiplier, let maximum):
            delay = Self.exponential(initial: initial, multiplier: multiplier, maximum: maximum, retry: retry)
        }
        if jitter > 0 {
            delay = delay.scaled(by: 1 - jitter * Self.unitInterval(random()))
        }
        return delay
    }

    /// `initial × multiplier^(retry − 1)`, capped at `maximum`, with `0 ≤ initial ≤ maximum` and
    /// `multiplier ≥ 1`. One `pow` in `Double` rather than a multiplication per retry: the cost
    /// does not grow with `retry`, and `Duration` arithmetic, which traps when it leaves its range,
    /// is never asked for more than `maximum`. Exact for the usual delays and multipliers (a
    /// whole number of milliseconds, powers of two and three); `pow` rounds correctly, so the
    /// delays never shrink from one retry to the next.
    private static func exponential(initial: Duration, multiplier: Double, maximum: Duration, retry: Int) -> Duration {
        guard retry > 1, multiplier > 1, initial > .zero else { return initial }
        let product = Double(initial.attoseconds) * pow(multiplier, Double(retry - 1))
        guard product < Double(maximum.attoseconds) else { return maximum }
        return min(Duration(attoseconds: Int128(product)), maximum)
    }
}

extension Duration {
    /// This duration (not negative) times `factor` (in `0...1`), rounded down to the attosecond.
    fileprivate func scaled(by factor: Double) -> Duration {
        let product = Double(attoseconds) * factor
        guard product < Double(attoseconds) else { return self }  // a factor of 1, or rounding up
        return Duration(attoseconds: Int128(product))
    }
}
