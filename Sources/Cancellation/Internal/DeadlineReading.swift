import FutureLibConcurrencyHelpers

/// How a token's ``CancellationToken/deadline`` is read: nothing is stored for it. A request's own
/// deadline is where its timer is scheduled, read from the timer under its clock's lock, and a
/// linked request's is computed from its sources' when asked. So arming, re-arming and cancelling
/// pay nothing for the deadline, a request without a timer stores nothing, and the deadline read
/// is always the one the timer will fire at, however threads race to re-arm it.
///
/// The links form a graph without cycles (a request is linked to tokens that exist before it), of
/// any depth. Small graphs (the common ones: a request linked to a client's token and a shutdown
/// token, a call linked to its handler's token) are read by plain recursion, which allocates
/// nothing; past ``recursionBudget`` requests visited, the read starts again with an explicit
/// stack and a memo of the requests already read, linear in the graph's size and in constant
/// machine stack, so a chain 10⁶ deep or a graph whose paths multiply is read too.
extension CancellationCore {
    /// How many requests the recursive read visits before it hands over to the explicit walk.
    static let recursionBudget = 32

    /// The earliest instant at which a timer will cancel this request; see ``CancellationToken/deadline``.
    var deadline: CancellationDeadline? {
        if isCancellationRequested { return .passed }
        var budget = Self.recursionBudget
        if let deadline = recursiveDeadline(budget: &budget) { return deadline }
        return walkedDeadline()
    }

    /// The deadline by recursion; `.none` (outer) when the budget ran out.
    private func recursiveDeadline(budget: inout Int) -> CancellationDeadline?? {
        budget -= 1
        guard budget >= 0 else { return .none }
        switch deadlineParts {
        case .cancelled:
            return .some(.passed)
        case .none:
            return .some(nil)
        case .parts(let timer, let clock, let links, let isAllOf):
            var combined = LinkedDeadline(isAllOf: isAllOf)
            for index in 0..<links.count {
                guard let source = links.source(at: index) else { continue }
                guard let deadline = source.recursiveDeadline(budget: &budget) else { return .none }
                combined.add(deadline)
            }
            return .some(CancellationDeadline.earliest(Self.deadline(of: timer, on: clock), combined.deadline))
        }
    }

    /// The deadline by an explicit walk of the link graph, each request read once.
    private func walkedDeadline() -> CancellationDeadline? {
        /// A request being read: its own timer's deadline, its sources, and what they gave so far.
        struct Frame {
            let core: CancellationCore
            let own: CancellationDeadline?
            let links: SourceLinks
            var next = 0
            var combined: LinkedDeadline
        }
        /// The requests read so far, kept alive so that their identifiers stay theirs.
        var memo: [ObjectIdentifier: (core: CancellationCore, deadline: CancellationDeadline?)] = [:]
        var stack: [Frame] = []
        var returned: CancellationDeadline?? = .none
        var pending: CancellationCore? = self
        while true {
            if let core = pending {
                pending = nil
                if let known = memo[ObjectIdentifier(core)] {
                    returned = .some(known.deadline)
                } else {
                    switch core.deadlineParts {
                    case .cancelled:
                        returned = .some(.passed)
                    case .none:
                        returned = .some(nil)
                    case .parts(let timer, let clock, let links, let isAllOf):
                        stack.append(
                            Frame(
                                core: core,
                                own: Self.deadline(of: timer, on: clock),
                                links: links,
                                combined: LinkedDeadline(isAllOf: isAllOf)
                            )
                        )
                    }
                }
            }
            guard var frame = stack.popLast() else { return returned ?? nil }
            if let deadline = returned {
                frame.combined.add(deadline)
                returned = .none
            }
            while frame.next < frame.links.count, pending == nil {
                pending = frame.links.source(at: frame.next)
                frame.next += 1
            }
            if pending != nil {
                stack.append(frame)
                continue
            }
            let deadline = CancellationDeadline.earliest(frame.own, frame.combined.deadline)
            memo[ObjectIdentifier(frame.core)] = (frame.core, deadline)
            returned = .some(deadline)
        }
    }

    /// Where `timer` is scheduled, on `clock`: read from the timer itself.
    private static func deadline(of timer: (any ClockTimer)?, on clock: (any TimerClock)?) -> CancellationDeadline? {
        guard let timer, let clock else { return nil }
        let instant: Duration?
        if let timer = timer as? SystemTimer {
            instant = timer.scheduledDeadline
        } else if let timer = timer as? ManualTimer {
            instant = timer.scheduledDeadline
        } else if let timer = timer as? TrackedTimer {
            instant = timer.deadline
        } else {
            instant = nil  // every timer a request installs is one of the three (``arm(after:on:)``)
        }
        return instant.map { CancellationDeadline(instant: $0, clock: clock) }
    }
}

/// The deadline a request's links give: the earliest of its sources' (cancelled once any is), or
/// for ``CancellationCore/link(toAll:)`` the latest, and none as soon as one source has none.
private struct LinkedDeadline {
    let isAllOf: Bool
    private(set) var deadline: CancellationDeadline?
    /// All-of: whether a source without a deadline was seen, which rules out any.
    private var isUnbounded = false
    private var isEmpty = true

    init(isAllOf: Bool) {
        self.isAllOf = isAllOf
    }

    mutating func add(_ source: CancellationDeadline?) {
        defer { isEmpty = false }
        guard isAllOf else {
            deadline = CancellationDeadline.earliest(deadline, source)
            return
        }
        guard !isUnbounded, let source else {
            isUnbounded = true
            deadline = nil
            return
        }
        deadline = isEmpty ? source : deadline.map { CancellationDeadline.latest($0, source) }
    }
}

extension CancellationRegistration {
    /// The core of the request this registration's handler is stored on, if it is still alive:
    /// the owner itself, or the request of the stripe whose owner it is.
    var observedCore: CancellationCore? {
        guard let key, let owner else { return nil }
        if RegistrationStripes.isStripeOwned(key) { return unsafeDowncast(owner, to: StripeOwner.self).stripe.core }
        return unsafeDowncast(owner, to: CancellationCore.self)
    }
}

/// A timer of a clock of the user's own, which keeps the instant it is due at: such a clock's
/// timers do not say, and a request's deadline is read from its timer. The instant is
/// ``TimerClock/now`` plus the delay, read when it is armed or moved.
final class TrackedTimer: ClockTimer {
    private let base: any ClockTimer
    private let clock: any TimerClock
    private let instant: Lock<Duration>

    init(on clock: any TimerClock, after delay: Duration, _ fire: @escaping @Sendable () -> Void) {
        self.clock = clock
        instant = Lock(Self.instant(after: delay, from: clock.now))
        base = clock.makeTimer(after: delay, fire)
    }

    /// The instant it is due at, on its clock.
    var deadline: Duration {
        instant.withLock { $0 }
    }

    func reschedule(after delay: Duration) {
        let new = Self.instant(after: delay, from: clock.now)  // the clock is user code: outside the lock
        instant.withLock { $0 = new }
        base.reschedule(after: delay)
    }

    func cancel() {
        base.cancel()
    }

    /// `now` plus `delay` (negative counting as zero), saturated instead of trapping for any `now`.
    private static func instant(after delay: Duration, from now: Duration) -> Duration {
        let (sum, overflow) = now.attoseconds.addingReportingOverflow(max(delay, .zero).attoseconds)
        return overflow ? Duration(attoseconds: .max) : Duration(attoseconds: sum)
    }
}
