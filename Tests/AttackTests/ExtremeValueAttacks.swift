import Cancellation
import Dispatch
import FutureLib
import Testing

// Extreme values: every `Duration` the API takes at `.seconds(Int64.max)`, `.seconds(Int64.min)`
// and one attosecond either side of zero, and Backoff's numbers at their limits, have a meaning:
// no trap, no overflow, no loop that grows with the number. Each case runs in a child process
// with a watchdog, so a trap or a hang fails that case only.

/// The durations every API that takes one is attacked with.
enum ExtremeDuration {
    static let all: [Duration] = [
        .seconds(Int64.max), .seconds(Int64.min), .init(secondsComponent: 0, attosecondsComponent: 1),
        .init(secondsComponent: 0, attosecondsComponent: -1), .zero,
        .init(secondsComponent: Int64.max, attosecondsComponent: 999_999_999_999_999_999),
        .init(secondsComponent: Int64.min, attosecondsComponent: -999_999_999_999_999_999),
    ]

    /// Whether a delay this long ends within a test (a positive one of more than an hour does not).
    static func endsSoon(_ duration: Duration) -> Bool { duration <= .seconds(1) }
}

enum ExtremeValues {
    static func cancelAfter() {
        failAfter(seconds: 60)
        for delay in ExtremeDuration.all {
            let request = CancellationRequest(cancelAfter: delay)
            if ExtremeDuration.endsSoon(delay) {
                guard request.token.wait(timeout: patient(.seconds(30))) else {
                    fatalError("cancelAfter(\(delay)) never fired")
                }
            } else if request.token.isCancellationRequested {
                fatalError("cancelAfter(\(delay)) fired at once")
            }
            let later = CancellationRequest()
            later.cancel(after: delay)
            if ExtremeDuration.endsSoon(delay) {
                guard later.token.wait(timeout: patient(.seconds(30))) else {
                    fatalError("cancel(after: \(delay)) never fired")
                }
            }
        }
    }

    static func manualClock() {
        failAfter(seconds: 60)
        let clock = ManualClock()
        var requests: [CancellationRequest] = []
        for delay in ExtremeDuration.all {
            requests.append(CancellationRequest(cancelAfter: delay, clock: clock))
            let later = CancellationRequest()
            later.cancel(after: delay, clock: clock)
            requests.append(later)
        }
        for step in ExtremeDuration.all { clock.advance(by: step) }
        clock.advance(by: .seconds(Int64.max))
        clock.advance(by: .seconds(Int64.max))
        for request in requests where !request.token.isCancellationRequested {
            fatalError("a ManualClock deadline did not pass after advancing by Int64.max seconds twice")
        }
    }

    static func blockingWaits() {
        failAfter(seconds: 60)
        for timeout in ExtremeDuration.all {
            // Uncancelled, pending: a timeout that ends soon returns false; a long one is ended by the other side.
            let request = CancellationRequest()
            let promise = Promise<Int>()
            if !ExtremeDuration.endsSoon(timeout) {
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) {
                    request.cancel()
                    promise.fulfill(1)
                }
            }
            let cancelled = request.token.wait(timeout: timeout)
            let completed = promise.future.wait(timeout: timeout)
            if ExtremeDuration.endsSoon(timeout), cancelled || completed {
                fatalError("wait(timeout: \(timeout)) reported an event that never happened")
            }
            if !ExtremeDuration.endsSoon(timeout) {
                guard cancelled, completed, (try? promise.future.value(timeout: timeout)) == 1 else {
                    fatalError("wait(timeout: \(timeout)) missed the event")
                }
            }
        }
    }

    static func futureTimeouts() {
        failAfter(seconds: 60)
        for delay in ExtremeDuration.all {
            let promise = Promise<Int>()
            let limited = promise.future.timeout(after: delay, on: .synchronous)
            let operation = Future<Int>.withTimeout(delay, on: .synchronous) { _ in promise.future }
            if ExtremeDuration.endsSoon(delay) {
                guard limited.wait(timeout: patient(.seconds(30))), operation.wait(timeout: patient(.seconds(30)))
                else {
                    fatalError("timeout(after: \(delay)) never fired")
                }
            }
            promise.fulfill(1)
            guard limited.wait(timeout: patient(.seconds(30))), operation.wait(timeout: patient(.seconds(30))) else {
                fatalError("timeout(after: \(delay)) did not complete")
            }
        }
    }

    static func asyncWaits() async {
        failAfter(seconds: 60)
        for timeout in ExtremeDuration.all where ExtremeDuration.endsSoon(timeout) {
            let promise = Promise<Int>()
            let waited = await promise.future.wait(timeout: timeout)
            let value = try? await promise.future.value(timeout: timeout)
            if waited || value != nil { fatalError("await wait(timeout: \(timeout)) saw a value nobody gave") }
        }
        for timeout in ExtremeDuration.all where !ExtremeDuration.endsSoon(timeout) {
            let value = try? await Future(value: 1).value(timeout: timeout)
            if value != 1 { fatalError("await value(timeout: \(timeout)) lost a completed value") }
        }
    }

    static func backoffDurations() {
        failAfter(seconds: 30)
        for delay in ExtremeDuration.all {
            let backoffs: [Backoff] = [
                .constant(delay),
                .exponential(initial: delay, maximum: .seconds(10)),
                .exponential(initial: .seconds(1), maximum: delay),
                .exponential(initial: delay, multiplier: 1e300, maximum: delay),
                .constant(delay).jittered(),
                .exponential(initial: delay, maximum: .seconds(Int64.max)).jittered(by: 1),
            ]
            for backoff in backoffs {
                for retry in [Int.min, -1, 0, 1, 2, 64, 1_000, Int.max - 1, Int.max] {
                    let value = backoff.delay(beforeRetry: retry)
                    if value < .zero { fatalError("Backoff gave a negative delay \(value) for \(delay)") }
                }
            }
        }
    }

    static func backoffMultipliers() {
        failAfter(seconds: 30)
        for multiplier in [1, 1.000_000_1, 2, 1e300, .infinity, .greatestFiniteMagnitude, .nan, 0, -1, -.infinity] {
            let backoff = Backoff.exponential(initial: .seconds(1), multiplier: multiplier, maximum: .seconds(60))
            for retry in [1, 2, 100, Int.max] {
                let value = backoff.delay(beforeRetry: retry)
                if value < .zero || value > .seconds(60) {
                    fatalError("multiplier \(multiplier) gave \(value) before retry \(retry)")
                }
            }
        }
    }

    static func jitterSources() {
        failAfter(seconds: 30)
        let sources: [Double] = [.nan, .infinity, -.infinity, -1, 2, 1, 0, .greatestFiniteMagnitude, -0.0]
        for fraction in [0, 0.5, 1, .nan, -1, 2, .infinity] {
            for source in sources {
                let backoff = Backoff.constant(.seconds(10)).jittered(by: fraction) { source }
                for retry in [1, Int.max] {
                    let value = backoff.delay(beforeRetry: retry)
                    if value < .zero || value > .seconds(10) {
                        fatalError("jitter \(fraction) with a source of \(source) gave \(value)")
                    }
                }
            }
        }
    }

    /// The marks of `stream` as they come: values, `t` for ``FutureError/timeout``, `c` for a
    /// cancellation, `|` for the end.
    private static func record<T>(_ stream: FutureStream<T>) -> Shared<[String]> {
        let marks = Shared<[String]>([])
        stream.onComplete(on: .synchronous) { result in
            let mark =
                switch result {
                case .success(let value): "\(value)"
                case .failure(FutureError.timeout): "t"
                case .failure(let error): error is CancellationError ? "c" : "?"
                }
            marks.withLock { $0.append(mark) }
        }
        stream.onFinish(on: .synchronous) { marks.withLock { $0.append("|") } }
        return marks
    }

    /// The one-shot timed stream operators on a `ManualClock`, with every duration: a value, the
    /// clock advanced to the end of its time (twice), a value, the end. Each gives its one meaning,
    /// and leaves nothing on the clock.
    static func streamOperatorDurations() {
        failAfter(seconds: 60)
        for duration in ExtremeDuration.all {
            let clock = ManualClock()
            let source = StreamPromise<Int>(capacity: 0)
            let debounced = record(source.stream.debounce(for: duration, clock: clock))
            let throttled = record(source.stream.throttle(for: duration, clock: clock))
            let throttledFirst = record(source.stream.throttle(for: duration, clock: clock, latest: false))
            let watched = record(source.stream.timeout(after: duration, clock: clock))
            source.fulfill(1)
            clock.advance(by: duration)
            clock.advance(by: .seconds(Int64.max))
            clock.advance(by: .seconds(Int64.max))
            source.fulfill(2)
            source.finish()
            let seen = [debounced.value, throttled.value, throttledFirst.value, watched.value]
            guard seen == [["1", "2", "|"], ["1", "2", "|"], ["1", "2", "|"], ["1", "t", "|"]] else {
                fatalError("debounce, throttle, timeout with \(duration): \(seen)")
            }
            guard clock.pendingTimerCount == 0 else { fatalError("a timer of \(duration) was left on the clock") }
        }
    }

    /// `interval` and the timed `chunks`, whose timer re-arms itself, with every duration: the
    /// short ones tick every millisecond; the longest tick once, at the end of the clock's time,
    /// and then never again (an advance there returns).
    static func periodicStreamDurations() {
        failAfter(seconds: 60)
        for duration in ExtremeDuration.all {
            let clock = ManualClock()
            let stop = CancellationRequest()
            let source = StreamPromise<Int>(capacity: 0)
            let ticks = record(FutureStream<Int>.interval(duration, clock: clock, cancellationToken: stop.token))
            let chunks = record(source.stream.chunks(every: duration, clock: clock))
            let counted = record(source.stream.chunks(ofCount: 3, or: duration, clock: clock))
            source.fulfill(1)
            if ExtremeDuration.endsSoon(duration) {
                clock.advance(by: .milliseconds(3))  // less than a millisecond counts as one
                guard ticks.value == ["0", "1", "2"] else { fatalError("interval(\(duration)): \(ticks.value)") }
            } else {
                clock.advance(by: .seconds(Int64.max))
                clock.advance(by: .seconds(Int64.max))
                guard ticks.value == ["0"] else { fatalError("interval(\(duration)): \(ticks.value)") }
            }
            source.fulfill(2)
            source.finish()
            stop.cancel()
            guard chunks.value == ["[1]", "[2]", "|"], counted.value == ["[1]", "[2]", "|"], ticks.value.last == "|"
            else { fatalError("chunks(every: \(duration)): \(chunks.value), \(counted.value)") }
            guard clock.pendingTimerCount == 0 else { fatalError("a timer of \(duration) was left on the clock") }
        }
    }

    static func extremeCapacities() {
        failAfter(seconds: 30)
        let everything = StreamPromise<Int>(capacity: .max)
        everything.fulfill(1)
        let limited = LimitedExecutionContext(maxConcurrency: .max)
        let ran = Shared(false)
        let done = Promise<Void>()
        limited.execute {
            ran.value = true
            done.fulfill()
        }
        guard done.future.wait(timeout: patient(.seconds(20))), ran.value else {
            fatalError("maxConcurrency: .max ran nothing")
        }
    }
}

extension Attacks {
    @Suite(.serialized, .timeLimit(.minutes(AttackLimit.minutes(5))))
    struct ExtremeValueAttacks {
        @Test
        func `cancelAfter and cancel(after:) take every duration`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    ExtremeValues.cancelAfter()
                }
            )
        }

        @Test func `ManualClock deadlines and advance(by:) take every duration`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    ExtremeValues.manualClock()
                }
            )
        }

        @Test func `the blocking waits take every timeout`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    ExtremeValues.blockingWaits()
                }
            )
        }

        @Test func `the async waits take every timeout`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    await ExtremeValues.asyncWaits()
                }
            )
        }

        @Test
        func `timeout(after:) and withTimeout take every duration`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    ExtremeValues.futureTimeouts()
                }
            )
        }

        @Test
        func `Backoff takes every duration and retry number`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    ExtremeValues.backoffDurations()
                }
            )
        }

        @Test
        func `Backoff takes every multiplier`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    ExtremeValues.backoffMultipliers()
                }
            )
        }

        @Test
        func `a jitter source may return anything`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    ExtremeValues.jitterSources()
                }
            )
        }

        @Test func `debounce, throttle and timeout take every duration`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    ExtremeValues.streamOperatorDurations()
                }
            )
        }

        @Test func `interval and the timed chunks take every duration, and stop at the end of time`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    ExtremeValues.periodicStreamDurations()
                }
            )
        }

        @Test func `capacities and maxConcurrency at their largest`() async {
            report(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    ExtremeValues.extremeCapacities()
                }
            )
        }
    }
}
