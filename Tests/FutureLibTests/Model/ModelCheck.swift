import Foundation
import FutureLib
import FutureTestSupport
import TestSupport

/// The reference model: from the operation list alone (and what `unregister()`/`tryFulfill`
/// returned, which only the run can tell), what must have happened.
///
/// Rules, from Documentation/Guarantees.md:
/// - A request is cancelled iff some operation cancelled it (now or after a delay) or it is
///   linked to one that is cancelled.
/// - A handler runs at most once; never if an `unregister()` of it returned true; exactly once
///   if its request is cancelled and no `unregister()` returned true. At most one `unregister()`
///   returns true, and only the first one of its thread can; if the request is never cancelled
///   the first one does.
/// - A handler registered after its own thread cancelled the request runs at once, inside
///   `onCancel`. Handlers stored on one request run newest first: of two registered by the same
///   thread, the later one runs first.
/// - At most one resolution of a promise wins; the future ends with it, or with
///   `brokenPromise` once the unresolved promise is dropped.
/// - A continuation runs exactly once or never, with the future's result or — only if its
///   token was cancelled — with `CancellationError` (never for `onSuccess`). It must be the
///   cancellation when the token was cancelled and the future never completed before the drop,
///   or when its own thread had cancelled the token before registering.
/// - On the serial queue: always on that queue; those of one thread on one future that got
///   the result run in registration order.
/// - A combinator's future ends with the transformed result, or — only if its token was
///   cancelled — with `CancellationError`; `recover` never turns a cancellation into a value.
struct ModelChecker {
    let scenario: ModelScenario
    let world: ModelWorld

    /// Waits for the run to settle (timers fired, promises dropped, the queue drained) and
    /// returns every violation found.
    func check() -> [String] {
        var problems: [String] = []
        let cancelled = expectedCancelledRequests()

        // 1. Requests: wait for the timers, then compare.
        waitUntil { cancelled.allSatisfy { world.requests[$0].isCancellationRequested } }
        for (index, request) in world.requests.enumerated()
        where request.isCancellationRequested != cancelled.contains(index) {
            problems.append(
                "r\(index) cancelled: \(request.isCancellationRequested), model: \(cancelled.contains(index))"
            )
        }

        // 2. Wait for every cancellation pass to finish (a timer's may still be running).
        let handlers = scenario.operations.filter(isHandler)
        let mustRun = handlers.filter { handlerIsCancelled($0, cancelled) && !unregisteredInTime($0.id) }
        waitUntil { cancelled.allSatisfy { world.recorder.passFinished[$0].value == 1 } }
        waitUntil { mustRun.allSatisfy { runs(of: $0.id).count >= 1 } }

        // 3. Promises: drop them, so the unresolved ones break their futures; drain the queue.
        let finals = expectedFinalResults(&problems)
        world.promises.withLock { $0 = $0.map { _ in nil } }
        waitUntil { world.futures.allSatisfy(\.isCompleted) }
        drainQueue()
        for (index, future) in world.futures.enumerated() {
            let actual = future.result.map(ModelOutcome.init)
            if actual != finals[index] {
                problems.append("p\(index) ended \(actual.map { "\($0)" } ?? "pending"), model: \(finals[index])")
            }
        }

        for handler in handlers { checkHandler(handler, cancelled, &problems) }
        checkLIFO(handlers, &problems)
        // Continuations on the serial queue or on a thread still finishing may deliver a little
        // later: poll until they all match the model (at once, normally) or 30 seconds passed.
        var continuationProblems: [String] = []
        waitUntil {
            continuationProblems = []
            for operation in scenario.operations {
                checkContinuation(operation, cancelled, finals, &continuationProblems)
            }
            return continuationProblems.isEmpty
        }
        drainQueue()
        problems += continuationProblems
        checkSerialOrder(&problems)
        return problems
    }

    // MARK: - Requests

    private func expectedCancelledRequests() -> Set<Int> {
        var cancelled = Set<Int>()
        for operation in scenario.operations {
            switch operation.kind {
            case .cancel(let request), .cancelAfter(let request, _): cancelled.insert(request)
            default: break
            }
        }
        if !cancelled.isDisjoint(with: ModelScenario.linkedSources) { cancelled.insert(ModelScenario.linkedRequest) }
        return cancelled
    }

    /// Whether an earlier operation of the same thread cancelled `request` directly with `cancel()`
    /// (so the request was cancelled, in memory, before that thread's next operation).
    private func cancelledEarlier(_ request: Int, before operation: ModelOperation) -> Bool {
        scenario.operations.contains {
            guard $0.thread == operation.thread, $0.id < operation.id, case .cancel(let cancelled) = $0.kind else {
                return false
            }
            return cancelled == request
        }
    }

    // MARK: - Handlers

    private func isHandler(_ operation: ModelOperation) -> Bool {
        switch operation.kind {
        case .register, .link: true
        default: false
        }
    }

    private func handlerIsCancelled(_ handler: ModelOperation, _ cancelled: Set<Int>) -> Bool {
        switch handler.kind {
        case .register(let request): cancelled.contains(request)
        case .link(let sources): !cancelled.isDisjoint(with: sources)
        default: false
        }
    }

    private func unregisters(of handler: Int) -> [ModelOperation] {
        scenario.operations.filter {
            if case .unregister(let target) = $0.kind { return target == handler }
            return false
        }
    }

    private func unregisteredInTime(_ handler: Int) -> Bool {
        unregisters(of: handler).contains { world.returned.value[$0.id] == true }
    }

    private func runs(of id: Int) -> [ModelRun] {
        world.runs.value[id] ?? []
    }

    private func checkHandler(_ handler: ModelOperation, _ cancelled: Set<Int>, _ problems: inout [String]) {
        let runs = runs(of: handler.id)
        let name = "h\(handler.id)"
        let results = unregisters(of: handler.id).map { world.returned.value[$0.id] ?? false }
        let isCancelled = handlerIsCancelled(handler, cancelled)
        if runs.count > 1 { problems.append("\(name) ran \(runs.count) times") }
        if results.dropFirst().contains(true) { problems.append("\(name): a second unregister() returned true") }
        if results.contains(true), !runs.isEmpty { problems.append("\(name) ran although unregister() returned true") }
        if !isCancelled {
            if !runs.isEmpty { problems.append("\(name) ran but its request was never cancelled") }
            if results.first == false { problems.append("\(name): unregister() returned false, never cancelled") }
        } else if !results.contains(true), runs.count != 1 {
            problems.append("\(name) ran \(runs.count) times, must run once (cancelled, not unregistered)")
        }
        guard let run = runs.first else { return }
        let direct: Bool
        switch handler.kind {
        case .register(let request): direct = cancelledEarlier(request, before: handler)
        case .link(let sources): direct = sources.contains { cancelledEarlier($0, before: handler) }
        default: direct = false
        }
        if direct, !run.insideRegistration {
            problems.append("\(name): its thread had cancelled the request, but it did not run inside onCancel")
        }
        if run.insideRegistration, run.worker != handler.thread {
            problems.append("\(name) ran inside registration on another thread")
        }
    }

    /// Handlers of one request registered by one thread and run by the cancellation pass (not
    /// inline at registration) run newest first.
    private func checkLIFO(_ handlers: [ModelOperation], _ problems: inout [String]) {
        var groups: [String: [(id: Int, sequence: Int)]] = [:]
        for handler in handlers {
            guard case .register(let request) = handler.kind, let run = runs(of: handler.id).first,
                !run.insideRegistration
            else { continue }
            groups["r\(request) t\(handler.thread)", default: []].append((handler.id, run.sequence))
        }
        for (group, members) in groups {
            let inRegistrationOrder = members.sorted { $0.id < $1.id }
            for (earlier, later) in zip(inRegistrationOrder, inRegistrationOrder.dropFirst())
            where later.sequence > earlier.sequence {
                problems.append("\(group): h\(later.id) registered after h\(earlier.id) but ran after it (not LIFO)")
            }
        }
    }

    // MARK: - Promises and continuations

    private func expectedFinalResults(_ problems: inout [String]) -> [ModelOutcome] {
        (0..<ModelScenario.promiseCount).map { index in
            var winners: [ModelOutcome] = []
            for operation in scenario.operations {
                switch operation.kind {
                case .fulfill(index, let value) where world.returned.value[operation.id] == true:
                    winners.append(.value(value))
                case .reject(index, let code) where world.returned.value[operation.id] == true:
                    winners.append(.failure(code: code))
                default: break
                }
            }
            let hasResolutions = scenario.operations.contains {
                switch $0.kind {
                case .fulfill(index, _), .reject(index, _): true
                default: false
                }
            }
            if winners.count > 1 { problems.append("p\(index): \(winners.count) resolutions returned true") }
            if hasResolutions, winners.isEmpty { problems.append("p\(index): no resolution returned true") }
            return winners.first ?? .brokenPromise
        }
    }

    /// Whether the promise was resolved during the run (not only broken by the drop).
    private func resolvedDuringRun(_ index: Int, _ finals: [ModelOutcome]) -> Bool {
        finals[index] != .brokenPromise
    }

    private func checkContinuation(
        _ operation: ModelOperation,
        _ cancelled: Set<Int>,
        _ finals: [ModelOutcome],
        _ problems: inout [String]
    ) {
        let name = "c\(operation.id)"
        let runs = runs(of: operation.id)
        let outcomes = runs.map(\.outcome)
        switch operation.kind {
        case .observe(let index, let callback, let serial, let token):
            let final = finals[index]
            let mayCancel = token.map { cancelled.contains($0) } ?? false
            let mustCancel =
                mayCancel
                && (!resolvedDuringRun(index, finals) || cancelledEarlier(token!, before: operation))
            let finalIsSuccess = if case .value = final { true } else { false }
            var allowed: [[ModelOutcome]]
            switch callback {
            case .onComplete: allowed = mustCancel ? [[.cancelled]] : [[final]] + (mayCancel ? [[.cancelled]] : [])
            case .onSuccess:
                let onResult: [ModelOutcome] = finalIsSuccess ? [final] : []
                allowed = mustCancel ? [[]] : [onResult] + (mayCancel ? [[]] : [])
            case .onFailure:
                let onResult: [ModelOutcome] = finalIsSuccess ? [] : [final]
                allowed = mustCancel ? [[.cancelled]] : [onResult] + (mayCancel ? [[.cancelled]] : [])
            }
            if !allowed.contains(outcomes) {
                problems.append("\(name) (\(callback)) got \(outcomes), model allows \(allowed)")
            }
            if serial, runs.contains(where: { !$0.onSerialQueue }) {
                problems.append("\(name) did not run on its serial queue")
            }
        case .combine(let combinator, let sources, let token):
            let results = sources.map { finals[$0] }
            let mayCancel = token.map { cancelled.contains($0) } ?? false
            let mustCancel =
                mayCancel
                && (sources.allSatisfy { !resolvedDuringRun($0, finals) }
                    || cancelledEarlier(token!, before: operation))
            var allowed = Set(Self.transformed(combinator, results).map(\.description))
            if mustCancel { allowed = [] }
            if mayCancel { allowed.insert(ModelOutcome.cancelled.description) }
            if outcomes.count != 1 || !allowed.contains(outcomes[0].description) {
                problems.append("\(name) (\(combinator)) got \(outcomes), model allows one of \(allowed.sorted())")
            }
        default:
            break
        }
    }

    /// The outcomes a combinator may end with when its sources ended with `results` (zip: the
    /// first failure in time, which the model cannot know, so any failure of a source).
    private static func transformed(
        _ combinator: ModelOperation.Combinator,
        _ results: [ModelOutcome]
    ) -> [ModelOutcome] {
        switch (combinator, results[0]) {
        case (.map, .value(let value)): return [.value(value * 2)]
        case (.flatMap, .value(let value)): return [.value(value + 1)]
        case (.recover, .value(let value)): return [.value(value)]
        case (.recover, _): return [.value(-1)]
        case (.zip, _):
            if case .value(let first) = results[0], case .value(let second) = results[1] {
                return [.value(first * 1000 + second)]
            }
            return results.filter { if case .value = $0 { false } else { true } }
        case (_, let failure): return [failure]
        }
    }

    /// Continuations of one thread on one future on the serial queue that got the result (not
    /// a cancellation) run in registration order.
    private func checkSerialOrder(_ problems: inout [String]) {
        var groups: [String: [(id: Int, sequence: Int)]] = [:]
        for operation in scenario.operations {
            guard case .observe(let index, _, true, _) = operation.kind, let run = runs(of: operation.id).first,
                run.outcome != .cancelled
            else { continue }
            groups["p\(index) t\(operation.thread)", default: []].append((operation.id, run.sequence))
        }
        for (group, members) in groups {
            for (earlier, later) in zip(members, members.dropFirst()) where later.sequence < earlier.sequence {
                problems.append("\(group): c\(later.id) ran before c\(earlier.id) on the serial queue")
            }
        }
    }

    // MARK: - Waiting

    /// Polls until `condition` holds or 30 seconds of a quiet machine passed (load-scaled: TestSupport's
    /// `blockUntil(seconds:_:)`); a failure shows up in the checks.
    private func waitUntil(_ condition: () -> Bool) {
        _ = blockUntil(seconds: 30, condition)
    }

    private func drainQueue() {
        world.queue.queue.sync {}
    }
}
