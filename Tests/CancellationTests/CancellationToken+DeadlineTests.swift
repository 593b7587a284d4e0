import Cancellation
import Synchronization
import TestSupport
import Testing

/// `CancellationToken.deadline` and `timeRemaining`, and `CancellationRequest(linkedTo:timeout:clock:)`:
/// exact on a `ManualClock`, which moves only when told to.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationTokenDeadlineTests {
    // MARK: - A request's own timer

    @Test func `the deadline is the timer's instant, and what remains is exact on a ManualClock`() {
        let clock = ManualClock()
        clock.advance(by: .seconds(7))
        let request = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
        let deadline = request.token.deadline
        #expect(deadline?.instant == .seconds(37))
        #expect(deadline?.clock is ManualClock)
        #expect(request.token.timeRemaining == .seconds(30))
        clock.advance(by: .milliseconds(12_345))
        #expect(request.token.timeRemaining == .milliseconds(17_655))
        #expect(deadline?.remaining == .milliseconds(17_655))  // a deadline read earlier measures now too
        #expect(deadline?.hasPassed == false)
    }

    @Test func `re-arming moves the deadline, earlier or later, and to another clock`() {
        let clock = ManualClock()
        let request = CancellationRequest(cancelAfter: .seconds(10), clock: clock)
        clock.advance(by: .seconds(4))
        request.cancel(after: .seconds(60))  // later, on the same clock
        #expect(request.token.deadline?.instant == .seconds(64))
        request.cancel(after: .seconds(1))  // earlier
        #expect(request.token.timeRemaining == .seconds(1))
        let other = ManualClock()
        request.cancel(after: .seconds(3), clock: other)  // another clock
        #expect(request.token.deadline?.clock as? ManualClock === other)
        #expect(request.token.timeRemaining == .seconds(3))
        clock.advance(by: .seconds(10))  // the first clock's timer was stopped
        #expect(request.token.timeRemaining == .seconds(3))
        other.advance(by: .seconds(3))
        #expect(request.isCancellationRequested)
        #expect(request.token.timeRemaining == .zero)
    }

    @Test func `nil when no timer can cancel the token`() {
        #expect(CancellationToken.none.deadline == nil)
        #expect(CancellationToken.none.timeRemaining == nil)
        let plain = CancellationRequest()
        #expect(plain.token.deadline == nil)
        let linked = CancellationRequest(linkedTo: [plain.token, .none])
        #expect(linked.token.deadline == nil)
        let gone = CancellationRequest().token  // deallocated uncancelled: it can no longer be cancelled
        #expect(gone.deadline == nil)
    }

    @Test func `a pending timer keeps the deadline of a token whose request is gone`() {
        let clock = ManualClock()
        let token = CancellationRequest(cancelAfter: .seconds(5), clock: clock).token
        #expect(token.timeRemaining == .seconds(5))
        clock.advance(by: .seconds(5))
        #expect(token.isCancellationRequested)
        #expect(token.timeRemaining == .zero)
    }

    // MARK: - Cancellation

    @Test func `once cancellation is requested, for any reason, the deadline has passed`() {
        struct Gone: Error {}
        let clock = ManualClock()
        let byCancel = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
        byCancel.cancel()
        let byReason = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
        byReason.cancel(reason: Gone())
        let byTimer = CancellationRequest(cancelAfter: .seconds(30), clock: clock)
        clock.advance(by: .seconds(30))
        let withoutTimer = CancellationRequest()
        withoutTimer.cancel()
        for token in [byCancel.token, byReason.token, byTimer.token, withoutTimer.token, .cancelled] {
            #expect(token.timeRemaining == .zero)
            #expect(token.deadline?.hasPassed == true)
        }
    }

    @Test func `a timer's deadline that passed reads zero, never negative, until it fires`() {
        let clock = ManualClock()
        let request = CancellationRequest()
        request.cancel(after: .seconds(2), clock: clock)
        let deadline = request.token.deadline
        clock.advance(by: .seconds(1))
        #expect(deadline?.remaining == .seconds(1))
        let later = CancellationDeadline(instant: .seconds(1), clock: clock)
        clock.advance(by: .seconds(5))
        #expect(later.remaining == .zero)
        #expect(later.hasPassed)
    }

    // MARK: - Linked requests

    @Test func `a linked request's deadline is the earliest of its own timer's and its sources'`() {
        let clock = ManualClock()
        let client = CancellationRequest(cancelAfter: .seconds(20), clock: clock)
        let route = CancellationRequest(cancelAfter: .seconds(8), clock: clock)
        let shutdown = CancellationRequest()
        let linked = CancellationRequest(linkedTo: [shutdown.token, client.token, route.token])
        #expect(linked.token.timeRemaining == .seconds(8))
        linked.cancel(after: .seconds(3), clock: clock)  // its own timer, earlier still
        #expect(linked.token.timeRemaining == .seconds(3))
        linked.cancel(after: .seconds(30), clock: clock)
        #expect(linked.token.timeRemaining == .seconds(8))
        route.cancel(after: .seconds(50))  // re-arming a source moves it
        #expect(linked.token.timeRemaining == .seconds(20))
        clock.advance(by: .seconds(5))
        #expect(linked.token.timeRemaining == .seconds(15))
        // A request linked to a linked request reads through both.
        let call = CancellationRequest(linkedTo: [linked.token])
        #expect(call.token.timeRemaining == .seconds(15))
        client.cancel()
        #expect(call.token.timeRemaining == .zero)
    }

    @Test func `an all-of request's deadline is the latest of its sources', and none once one has none`() {
        let clock = ManualClock()
        let alice = CancellationRequest(cancelAfter: .seconds(4), clock: clock)
        let bob = CancellationRequest(cancelAfter: .seconds(9), clock: clock)
        let shared = CancellationRequest(linkedToAll: [alice.token, bob.token])
        #expect(shared.token.timeRemaining == .seconds(9))
        alice.cancel()  // arrived: the deadline is bob's alone
        #expect(shared.token.timeRemaining == .seconds(9))
        bob.cancel(after: .seconds(2))
        #expect(shared.token.timeRemaining == .seconds(2))

        let carol = CancellationRequest()  // no deadline
        let dave = CancellationRequest(cancelAfter: .seconds(4), clock: clock)
        let unbounded = CancellationRequest(linkedToAll: [dave.token, carol.token])
        #expect(unbounded.token.deadline == nil)
        unbounded.cancel(after: .seconds(6), clock: clock)  // its own timer still counts
        #expect(unbounded.token.timeRemaining == .seconds(6))
        carol.cancel(after: .seconds(1), clock: clock)  // now every source has one
        #expect(unbounded.token.timeRemaining == .seconds(4))
    }

    @Test func `.none among the sources: any-of ignores it, all-of never fires by its sources`() {
        let clock = ManualClock()
        let deadline = CancellationRequest(cancelAfter: .seconds(5), clock: clock)
        let anyOf = CancellationRequest(linkedTo: [.none, deadline.token])
        #expect(anyOf.token.timeRemaining == .seconds(5))
        let allOf = CancellationRequest(linkedToAll: [.none, deadline.token])
        #expect(allOf.token.deadline == nil)
        let empty = CancellationRequest(linkedToAll: [])
        #expect(empty.token.deadline == nil)
    }

    @Test func `sources on different clocks compare by what remains`() {
        let slow = ManualClock()
        slow.advance(by: .seconds(1_000))  // instants far apart, remaining times not
        let fast = ManualClock()
        let first = CancellationRequest(cancelAfter: .seconds(10), clock: slow)  // instant 1,010 s
        let second = CancellationRequest(cancelAfter: .seconds(4), clock: fast)  // instant 4 s
        let linked = CancellationRequest(linkedTo: [first.token, second.token])
        #expect(linked.token.deadline?.clock as? ManualClock === fast)
        #expect(linked.token.timeRemaining == .seconds(4))
        fast.advance(by: .seconds(1))
        slow.advance(by: .seconds(8))
        #expect(linked.token.timeRemaining == .seconds(2))  // slow's: 2 s left, fast's 3 s
        #expect(linked.token.deadline?.clock as? ManualClock === slow)
        let allOf = CancellationRequest(linkedToAll: [first.token, second.token])
        #expect(allOf.token.timeRemaining == .seconds(3))
        let system = CancellationRequest(cancelAfter: .seconds(3_600))
        let mixed = CancellationRequest(linkedTo: [system.token, first.token])
        #expect(mixed.token.timeRemaining == .seconds(2))
    }

    // MARK: - One call: linked to a parent, with a timeout

    @Test func `init(linkedTo:timeout:) takes the earlier of the timeout and the parent's deadline`() {
        let clock = ManualClock()
        let parent = CancellationRequest(cancelAfter: .seconds(2), clock: clock)
        let bounded = CancellationRequest(linkedTo: parent.token, timeout: .seconds(5), clock: clock)
        #expect(bounded.token.timeRemaining == .seconds(2))  // the parent's is the earlier
        let quick = CancellationRequest(linkedTo: parent.token, timeout: .milliseconds(500), clock: clock)
        #expect(quick.token.timeRemaining == .milliseconds(500))  // the timeout is the earlier
        let alone = CancellationRequest(linkedTo: .none, timeout: .seconds(7), clock: clock)
        #expect(alone.token.timeRemaining == .seconds(7))
        clock.advance(by: .milliseconds(500))
        #expect(quick.isCancellationRequested)
        #expect(quick.token.cancellationReason is DeadlineExceededError)
        #expect(!bounded.isCancellationRequested)
        clock.advance(by: .milliseconds(1_500))  // the parent's timer: the child goes with it, same reason
        #expect(bounded.isCancellationRequested)
        #expect(bounded.token.cancellationReason is DeadlineExceededError)
    }

    @Test func `init(linkedTo:timeout:) is cancelled with the parent's reason, at once if the parent already is`() {
        struct ClientGone: Error {}
        let clock = ManualClock()
        let parent = CancellationRequest()
        let child = CancellationRequest(linkedTo: parent.token, timeout: .seconds(5), clock: clock)
        parent.cancel(reason: ClientGone())
        #expect(child.token.cancellationReason is ClientGone)
        #expect(clock.pendingTimerCount == 0)  // its timer was stopped
        let late = CancellationRequest(linkedTo: parent.token, timeout: .zero, clock: clock)
        #expect(late.token.cancellationReason is ClientGone)  // the parent's reason wins over a zero timeout
        let zero = CancellationRequest(linkedTo: .none, timeout: .seconds(-1), clock: clock)
        #expect(zero.token.cancellationReason is DeadlineExceededError)
    }

    // MARK: - Clocks

    @Test func `the system clock's deadline never remains longer than it was armed for`() {
        let request = CancellationRequest(cancelAfter: .seconds(3_600))
        let remaining = request.token.timeRemaining
        #expect(remaining.map { $0 > .zero && $0 <= .seconds(3_600) } == true)
        #expect(request.token.deadline?.clock is SystemClock)
        let huge = CancellationRequest(cancelAfter: .seconds(Int64.max))
        #expect(huge.token.timeRemaining.map { $0 > .seconds(1 << 60) } == true)  // clamped, never a trap
    }

    @Test func `a clock of one's own: its own now, or the system clock's by default`() {
        let own = OwnClock()
        own.now = .seconds(100)
        let request = CancellationRequest(cancelAfter: .seconds(8), clock: own)
        #expect(request.token.deadline?.instant == .seconds(108))
        own.now = .seconds(105)
        #expect(request.token.timeRemaining == .seconds(3))
        request.cancel(after: .seconds(1))  // re-armed on the same clock
        #expect(request.token.timeRemaining == .seconds(1))
        own.now = .seconds(200)
        #expect(request.token.timeRemaining == .zero)
        own.now = Duration(attoseconds: .min)  // any instant at all: never a trap
        #expect(request.token.timeRemaining.map { $0 > .zero } == true)

        let realTime = CancellationRequest(cancelAfter: .seconds(60), clock: RealTimeClock())
        #expect(realTime.token.timeRemaining.map { $0 > .zero && $0 <= .seconds(60) } == true)
    }

    @Test
    func `what remains is at most .seconds(Int64.max), whose components never trap, whatever the instant and now`() {
        /// What a client does with it: the wire's timeout is made from `components`.
        func expectWireSafe(_ remaining: Duration?, _ comment: Comment) {
            guard let remaining else {
                Issue.record("no deadline: \(comment)")
                return
            }
            #expect(remaining == .seconds(Int64.max), comment)
            if remaining <= .seconds(Int64.max) { #expect(remaining.components.seconds == Int64.max, comment) }
        }
        let manual = ManualClock()
        expectWireSafe(
            CancellationDeadline(instant: Duration(attoseconds: .max), clock: manual).remaining,
            "far instant"
        )
        let own = OwnClock()
        let request = CancellationRequest(cancelAfter: .seconds(Int64.max), clock: own)
        own.now = .seconds(-5)  // a clock of one's own that went back: more than .seconds(Int64.max) left
        expectWireSafe(request.token.timeRemaining, "now before the origin")
        own.now = Duration(attoseconds: .min)  // the subtraction overflows
        expectWireSafe(request.token.timeRemaining, "now at the start of Duration")
        own.now = Duration(attoseconds: .max)
        #expect(request.token.timeRemaining == .zero)
    }

    @Test func `init(linkedTo:timeout:) takes any timeout: clamped, due at once, or never a trap`() {
        let clock = ManualClock()
        let parent = CancellationRequest(cancelAfter: .seconds(60), clock: clock)
        let endless = CancellationRequest(linkedTo: .none, timeout: .seconds(Int64.max), clock: clock)
        #expect(endless.token.timeRemaining == .seconds(Int64.max))
        let beyond = CancellationRequest(linkedTo: .none, timeout: Duration(attoseconds: .max), clock: clock)
        #expect(beyond.token.timeRemaining == .seconds(Int64.max))  // clamped at the end of time
        let bounded = CancellationRequest(linkedTo: parent.token, timeout: .seconds(Int64.max), clock: clock)
        #expect(bounded.token.timeRemaining == .seconds(60))  // the parent's is the earlier
        let tiny = CancellationRequest(linkedTo: parent.token, timeout: Duration(attoseconds: 1), clock: clock)
        #expect(!tiny.isCancellationRequested)
        #expect(tiny.token.timeRemaining == Duration(attoseconds: 1))
        let past: [(Duration, Comment)] = [
            (Duration(attoseconds: -1), "-1 as"), (.seconds(Int64.min), "Int64.min s"),
            (Duration(attoseconds: .min), "min"),
        ]
        for (timeout, name) in past {
            let request = CancellationRequest(linkedTo: parent.token, timeout: timeout, clock: clock)
            #expect(request.token.cancellationReason is DeadlineExceededError, name)
            #expect(request.token.timeRemaining == .zero, name)
        }
        clock.advance(by: Duration(attoseconds: 1))
        #expect(tiny.token.cancellationReason is DeadlineExceededError)
        #expect(!bounded.isCancellationRequested)
        clock.advance(by: .seconds(Int64.max))  // the parent's timer, then the end of time
        #expect(bounded.token.cancellationReason is DeadlineExceededError)
        #expect(endless.isCancellationRequested)
        #expect(beyond.isCancellationRequested)
    }

    // MARK: - Depth and races

    @Test func `Scale: the deadline of a deep chain of linked requests, read on a 512 KB stack`() async {
        let depth = Stress.override != nil ? Scale.million : Scale.hundredThousand
        let outcome = Locked<[Duration?]>([])
        await onSmallStack {
            let clock = ManualClock()
            let root = CancellationRequest(cancelAfter: .seconds(9), clock: clock)
            var chain = [root]
            chain.reserveCapacity(depth + 1)
            for _ in 0..<depth { chain.append(CancellationRequest(linkedTo: [chain[chain.count - 1].token])) }
            // Paths that multiply: each linked twice to the one before, 64 deep (2⁶⁴ paths).
            var doubled = CancellationRequest(cancelAfter: .seconds(4), clock: clock)
            var diamond = [doubled]
            for _ in 0..<64 {
                doubled = CancellationRequest(linkedTo: [doubled.token, doubled.token])
                diamond.append(doubled)
            }
            let read = [chain[depth].token.timeRemaining, doubled.token.timeRemaining]
            outcome.withLock { $0 = read }
            withExtendedLifetime((chain, diamond)) {}
        }
        #expect(outcome.value == [.seconds(9), .seconds(4)])
    }

    final class RearmRound: Sendable {
        let clock = ManualClock()
        let request: CancellationRequest
        let linked: CancellationRequest
        let read = Mutex<[Duration?]>([])

        init() {
            request = CancellationRequest(cancelAfter: .seconds(10), clock: clock)
            linked = CancellationRequest(linkedTo: [request.token])
        }
    }

    @Test func `Race: re-arming vs reading the deadline: a reader sees one of the armed deadlines, whole`() async {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { RearmRound() },
            actions: [
                { round in
                    round.request.cancel(after: .seconds(20))
                    round.request.cancel(after: .seconds(5))
                },
                { round in
                    let first = round.request.token.timeRemaining
                    let second = round.linked.token.timeRemaining
                    round.read.withLock { $0 = [first, second] }
                },
            ],
            check: { round in
                let armed: Set<Duration?> = [.seconds(10), .seconds(20), .seconds(5)]
                let read = round.read.withLock { $0 }
                if let wrong = read.first(where: { !armed.contains($0) }) { return "read \(String(describing: wrong))" }
                let now = [round.request.token.timeRemaining, round.linked.token.timeRemaining]
                return now == [.seconds(5), .seconds(5)] ? nil : "after both, \(now)"
            }
        )
        #expect(failures == [])
    }

    @Test func `Race: cancelling vs reading the deadline: armed, or passed once cancelled`() async {
        let failures = await race(
            iterations: Stress.heavy,
            setup: { RearmRound() },
            actions: [
                { round in round.request.cancel() },
                { round in
                    let read = round.linked.token.timeRemaining
                    round.read.withLock { $0 = [read] }
                },
            ],
            check: { round in
                let read = round.read.withLock { $0 }
                guard read == [.seconds(10)] || read == [.zero] else { return "read \(read)" }
                return round.linked.token.timeRemaining == .zero ? nil : "not passed after cancel()"
            }
        )
        #expect(failures == [])
    }
}

/// A clock of the user's own that gives its `now`, and whose timers never fire by themselves.
private final class OwnClock: TimerClock {
    private let instant = Mutex(Duration.zero)

    var now: Duration {
        get { instant.withLock { $0 } }
        set { instant.withLock { $0 = newValue } }
    }

    func makeTimer(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> any ClockTimer {
        InertTimer()
    }
}

/// A clock of the user's own that gives no `now`: its timers are the system clock's.
private struct RealTimeClock: TimerClock {
    func makeTimer(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> any ClockTimer {
        SystemClock().makeTimer(after: delay, fire)
    }
}

private final class InertTimer: ClockTimer {
    func reschedule(after delay: Duration) {}
    func cancel() {}
}
