// `make soak`: FutureLib shaped like a server, for a long time. A million requests, each with a
// linked request on one long-lived shutdown token, a per-request deadline and a few futures with
// continuations that carry the token, on `.default` and a serial queue, raced with `firstCompleted`
// against a long-lived stop future that never completes. Most complete normally;
// some are cut off by their deadline, some by a simulated client disconnect. At the end a graceful
// shutdown cancels a last batch in flight.
//
//     Soak [requests] [--striped]     (default 1,000,000; `make soak-ci` runs fewer)
//
// `--striped` gives the shutdown token its per-processor registration stripes from the start, as
// a server whose requests arrive on several threads at once gets them (contention on the token's
// lock): the links of every request then live in the stripes.
//
// Prints requests handled, cancellations seen and the resident set at 10 checkpoints, and exits
// with a failure if the resident set grows after warm-up by more than `memoryBound`, if any
// request's future stays pending, if any handler or continuation runs twice, if an outcome is
// not the one its kind of request must have, or if a continuation is left on the stop future.
import Dispatch
import FutureLib
import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How much the resident set may grow from the first checkpoint (the warm-up: thread stacks,
/// malloc arenas, Dispatch's pools) to the largest later one.
let memoryBound = 8 << 20
/// At most this many requests in flight, as a server's connection limit would.
let maxInFlight = 1_000
let requests = CommandLine.arguments.dropFirst().lazy.compactMap { Int($0) }.first ?? 1_000_000
let striped = CommandLine.arguments.contains("--striped")

/// What happens to one request.
enum Kind: Sendable {
    /// Quick work that finishes well before the one-hour deadline.
    case normal
    /// Work of 200 ms against a deadline of 2 ms.
    case deadline
    /// Work of 200 ms; the client goes away at once.
    case disconnect

    init(_ index: Int) {
        switch index % 20 {
        case 0: self = .deadline
        case 1, 2: self = .disconnect
        default: self = .normal
        }
    }
}

/// Counters, written from any thread.
final class Stats: Sendable {
    let started = Atomic<Int>(0)
    let handled = Atomic<Int>(0)
    let succeeded = Atomic<Int>(0)
    let cancelledByDeadline = Atomic<Int>(0)
    let cancelledByDisconnect = Atomic<Int>(0)
    let cancelledByShutdown = Atomic<Int>(0)
    let handlersRun = Atomic<Int>(0)
    let ranTwice = Atomic<Int>(0)
    let wrongOutcome = Atomic<Int>(0)

    func count(_ counter: borrowing Atomic<Int>) {
        counter.add(1, ordering: .relaxed)
    }
}

/// A flag that tells whether something ran before.
final class Once: Sendable {
    private let ran = Atomic<Bool>(false)

    /// True the first time only.
    func enter() -> Bool { !ran.exchange(true, ordering: .relaxed) }
}

func megabytes(_ bytes: Int) -> String {
    let tenths = (bytes * 10) >> 20
    return "\(tenths / 10).\(tenths % 10) MB"
}

let stats = Stats()
let shutdown = CancellationRequest()
/// Pending for the whole run: every request is raced against it, as a server races its work
/// against a shutdown future. Nothing of a decided race may stay on it (before 27: 10⁶ requests
/// left 10⁶ continuations here, and with them their results).
let stop = Promise<String>()
let serial = DispatchQueue(label: "soak.serial")
let slots = DispatchSemaphore(value: maxInFlight)
if striped {
    precondition(shutdown.token.stripeRegistrations(), "the shutdown token could not get its stripes")
    print("shutdown token striped: \(CancellationToken.stripeCount) stripes")
}

/// Gives a request's slot back when the last closure that holds it is released: its completion
/// ran and its cancellation handler is gone (it ran, or its request's core was released with it).
/// Freeing the slot when the completion merely ran would let `drain` return while a request is
/// still alive, and linked to the shutdown token, for a moment after it; the shutdown could then
/// cancel it and run a handler that the checks do not expect.
final class Slot: Sendable {
    deinit { slots.signal() }
}

/// Starts one request: linked to `shutdown`, with its deadline, its work and its continuations.
/// Its slot is given back once its completion ran and its cancellation handler is gone.
func handle(_ index: Int, kind: Kind, work: Duration? = nil) {
    let request = CancellationRequest(linkedTo: [shutdown.token])
    request.cancel(after: kind == .deadline ? .milliseconds(2) : .seconds(3_600))
    let token = request.token
    let handlerOnce = Once()
    let slot = Slot()
    token.onCancel {
        withExtendedLifetime(slot) {}
        stats.count(stats.handlersRun)
        if !handlerOnce.enter() { stats.count(stats.ranTwice) }
    }
    let response: Future<Int>
    switch (kind, work) {
    case (_, let work?): response = Future(value: index, after: work, cancellationToken: token)
    case (.normal, nil): response = Future(on: .default, cancellationToken: token) { index &* 3 }
    case (_, nil): response = Future(value: index, after: .milliseconds(200), cancellationToken: token)
    }
    let body =
        response
        .map(on: .default, cancellationToken: token) { $0 &+ 1 }
        .flatMap(on: serial, cancellationToken: token) { value in Future(value: String(value)) }
    let completionOnce = Once()
    [body, stop.future].firstCompleted().onComplete(on: serial, cancellationToken: token) { result in
        withExtendedLifetime(slot) {}
        guard completionOnce.enter() else { return stats.count(stats.ranTwice) }
        stats.count(stats.handled)
        switch (kind, result) {
        case (_, .success) where work == nil && kind == .normal: stats.count(stats.succeeded)
        case (_, .failure(is CancellationError)) where work != nil: stats.count(stats.cancelledByShutdown)
        case (.deadline, .failure(is CancellationError)): stats.count(stats.cancelledByDeadline)
        case (.disconnect, .failure(is CancellationError)): stats.count(stats.cancelledByDisconnect)
        default: stats.count(stats.wrongOutcome)
        }
    }
    if kind == .disconnect {
        DispatchQueue.global().async { request.cancel() }
    }
    stats.count(stats.started)
}

/// Waits until every request in flight has completed and is released; false if some stay past `seconds`.
func drain(seconds: Int) -> Bool {
    for taken in 0..<maxInFlight {
        guard slots.wait(timeout: .now() + .seconds(seconds)) == .success else {
            for _ in 0..<taken { slots.signal() }
            return false
        }
    }
    for _ in 0..<maxInFlight { slots.signal() }
    return true
}

func report(_ label: String, resident: Int) {
    let cancelled =
        stats.cancelledByDeadline.load(ordering: .relaxed) + stats.cancelledByDisconnect.load(ordering: .relaxed)
    print(
        "\(label): \(stats.handled.load(ordering: .relaxed)) handled, \(cancelled) cancelled "
            + "(\(stats.cancelledByDeadline.load(ordering: .relaxed)) deadline, "
            + "\(stats.cancelledByDisconnect.load(ordering: .relaxed)) disconnect), "
            + "\(stats.handlersRun.load(ordering: .relaxed)) handlers run, resident \(megabytes(resident))"
    )
}

// MARK: - The run

let started = ContinuousClock.now
var checkpoints: [Int] = []
var failures: [String] = []
let checkpointEvery = max(requests / 10, 1)
/// Takes a slot for the next request; false (and a failure) if none came back within a minute: a
/// request that is never released holds its slot for good.
@MainActor func takeSlot() -> Bool {
    guard slots.wait(timeout: .now() + .seconds(60)) == .success else {
        failures.append("no request released its slot for 60 s: requests are kept after they ended")
        return false
    }
    return true
}
for index in 0..<requests {
    guard takeSlot() else { break }
    handle(index, kind: Kind(index))
    if (index + 1) % checkpointEvery == 0 {
        let resident = residentBytes() ?? 0
        checkpoints.append(resident)
        report("checkpoint \(checkpoints.count) at \(index + 1) requests", resident: resident)
    }
}
if !drain(seconds: 60) { failures.append("requests still pending 60 s after the last one started") }

// Graceful shutdown: a last batch of slow requests, cancelled by the shutdown token alone.
let lastBatch = 100
for index in 0..<lastBatch {
    guard takeSlot() else { break }
    handle(requests + index, kind: .normal, work: .seconds(3_600))
}
shutdown.cancel()
if !drain(seconds: 60) { failures.append("requests still pending 60 s after the shutdown") }

let resident = residentBytes() ?? 0
report("done in \(ContinuousClock.now - started)", resident: resident)
print("shutdown cancelled \(stats.cancelledByShutdown.load(ordering: .relaxed)) of \(lastBatch) in flight")

// MARK: - Checks

let total = requests + lastBatch
let kinds = (0..<requests).map(Kind.init)
let deadlines = kinds.filter { $0 == .deadline }.count
let disconnects = kinds.filter { $0 == .disconnect }.count
if stats.handled.load(ordering: .relaxed) != total {
    failures.append("\(total - stats.handled.load(ordering: .relaxed)) of \(total) requests never completed")
}
if stats.ranTwice.load(ordering: .relaxed) != 0 {
    failures.append("\(stats.ranTwice.load(ordering: .relaxed)) handlers or continuations ran twice")
}
if stats.wrongOutcome.load(ordering: .relaxed) != 0 {
    failures.append("\(stats.wrongOutcome.load(ordering: .relaxed)) requests ended with an outcome their kind excludes")
}
if stats.cancelledByShutdown.load(ordering: .relaxed) != lastBatch {
    failures.append("the shutdown cancelled \(stats.cancelledByShutdown.load(ordering: .relaxed)) of \(lastBatch)")
}
// Every cancelled request ran its one handler: the deadline and disconnect kinds and the last batch.
if stats.handlersRun.load(ordering: .relaxed) != deadlines + disconnects + lastBatch {
    failures.append(
        "\(stats.handlersRun.load(ordering: .relaxed)) cancellation handlers ran, expected "
            + "\(deadlines + disconnects + lastBatch)"
    )
}
if checkpoints.count > 1, let warm = checkpoints.first, let peak = checkpoints.dropFirst().max(),
    peak - warm > memoryBound
{
    failures.append(
        "resident set grew by \(megabytes(peak - warm)) after warm-up (\(megabytes(warm)) → \(megabytes(peak))), "
            + "more than \(megabytes(memoryBound))"
    )
}
if !stop.future.debugDescription.hasSuffix("; 0 continuations waiting)") {
    failures.append("decided races left continuations on the stop future: \(stop.future.debugDescription)")
}
if striped, !shutdown.token.isStriped {
    failures.append("the shutdown token lost its stripes")
}
if failures.isEmpty {
    let mode = striped ? " (striped shutdown token)" : ""
    print("soak passed\(mode): \(total) requests, growth after warm-up within \(megabytes(memoryBound))")
} else {
    for failure in failures { print("soak FAILED: \(failure)") }
    exit(1)
}
