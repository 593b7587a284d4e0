import FutureLibGRPC
import Synchronization

/// A clock whose time the test moves without running its timers (``pass(_:)``), and whose due timers run only when
/// the test says (``fireDue()``): a token's timer that a busy machine runs late, after its deadline has passed.
final class HeldClock: TimerClock {
    /// A timer of this clock: its deadline on the clock, and what it runs.
    final class Timer: ClockTimer {
        let clock: HeldClock
        let fire: @Sendable () -> Void
        /// The deadline, on the clock; `nil` once cancelled or fired.
        let deadline: Mutex<Duration?>

        init(clock: HeldClock, deadline: Duration, fire: @escaping @Sendable () -> Void) {
            self.clock = clock
            self.fire = fire
            self.deadline = Mutex(deadline)
        }

        func reschedule(after delay: Duration) {
            let now = clock.now
            deadline.withLock { $0 = now + delay }
        }

        func cancel() {
            deadline.withLock { $0 = nil }
        }
    }

    private let state = Mutex<(now: Duration, timers: [Timer])>((.zero, []))

    var now: Duration { state.withLock { $0.now } }

    func makeTimer(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> any ClockTimer {
        state.withLock { state in
            let timer = Timer(clock: self, deadline: state.now + delay, fire: fire)
            state.timers.append(timer)
            return timer
        }
    }

    /// Moves the time on by `duration`, running no timer.
    func pass(_ duration: Duration) {
        state.withLock { $0.now += duration }
    }

    /// Runs the timers whose deadline has passed, outside the lock.
    func fireDue() {
        let now = self.now
        let timers = state.withLock { $0.timers }
        for timer in timers {
            let due = timer.deadline.withLock { deadline -> Bool in
                guard let time = deadline, time <= now else { return false }
                deadline = nil
                return true
            }
            if due { timer.fire() }
        }
    }
}
