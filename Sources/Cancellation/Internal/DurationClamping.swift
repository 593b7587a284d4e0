/// How the clocks give every `Duration` a meaning, however extreme: a negative delay counts as
/// zero, and an instant never passes the end of a clock's time, ``Duration/endOfTime``, so that
/// adding a delay never overflows and `components` of an instant never traps.
extension Duration {
    /// The latest instant a clock of this package reaches: a deadline further away is due then
    /// (on the system clock, never). `.seconds(Int64.max)`, the longest duration whose
    /// `components` do not trap.
    package static let endOfTime = Duration.seconds(Int64.max)

    /// This instant (from zero up to ``endOfTime``) plus `delay`, a negative delay counting as
    /// zero, saturated at ``endOfTime``. Compared before it adds: `Duration`'s own `+` traps
    /// beyond about 1.7 × 10²⁰ seconds.
    package func advanced(byDelay delay: Duration) -> Duration {
        guard delay > .zero else { return self }
        return delay >= Duration.endOfTime - self ? Duration.endOfTime : self + delay
    }
}
