// Scenario 15: the server pattern against what a Swift server engineer would write with plain Swift concurrency.
//
// Each request can be cancelled three ways (a graceful shutdown, the client going away, its own deadline) and does
// the same work on both sides: it waits for an operation of a backend, adds one to the result (a `map`), renders it
// (a `flatMap`: a second step that could suspend) and reports its outcome (the completion). Of every 20 requests, 17
// complete (their operation is completed by the backend, their deadline is an hour away), 1 times out (its operation
// never completes, its deadline is 1 ms) and 2 are cancelled by their client (operation never completes, deadline an
// hour away). So the count of each outcome is exact whatever the machine's load; every run checks it.
//
// - FutureLib: a client `CancellationRequest` per connection, a request linked to the shutdown token and the client's
//   token with `cancel(after:)` for the deadline, the operation a `Promise`, then `map`, `flatMap` and `onComplete`,
//   the first two carrying the request's token, all on `.synchronous`.
// - Swift concurrency: a `Task` per request, whose handle the connection keeps (the client going away cancels it) and
//   a shared shutdown registry keeps (shutdown cancels them all, as swift-service-lifecycle's graceful-shutdown
//   handlers do); inside, a task group races the work against `Task.sleep` for the deadline; the operation is a
//   continuation wrapped in `withTaskCancellationHandler`, as a callback API is wrapped for async code.
//
// The backend completes 85 % of the operations once every request is started, the clients of 10 % go away, and once
// every request has reported, the backend completes the rest late (nobody listens any more) on both sides.

import Cancellation
import Foundation
import FutureLib
import MallocCounter
import MallocInfo
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How a request of scenario 15 ends.
enum RequestKind: String, CaseIterable, Sendable {
    case completes = "the operation completes"
    case cancelledByClient = "the client goes away"
    case timesOut = "the deadline passes"

    init(_ index: Int) {
        switch index % 20 {
        case 0: self = .timesOut
        case 1, 2: self = .cancelledByClient
        default: self = .completes
        }
    }

    var deadline: Duration { self == .timesOut ? .milliseconds(1) : .seconds(3_600) }
}

/// The outcomes reported by one run, checked against the kinds of its requests.
final class Outcomes: Sendable {
    // Sendable: atomics only.
    private let succeeded = Atomic<Int>(0)
    private let timedOut = Atomic<Int>(0)
    private let cancelled = Atomic<Int>(0)
    private let wrong = Atomic<Int>(0)

    /// `timedOut` says whether the failure was the deadline's (where the side can tell it apart).
    func record(_ kind: RequestKind, succeeded success: Bool, timedOut timeout: Bool) {
        switch (kind, success) {
        case (.completes, true): succeeded.add(1, ordering: .relaxed)
        case (.timesOut, false): timedOut.add(1, ordering: .relaxed)
        case (.cancelledByClient, false) where !timeout: cancelled.add(1, ordering: .relaxed)
        default: wrong.add(1, ordering: .relaxed)
        }
    }

    /// Stops the driver if any request of `count` ended in a way its kind does not allow.
    func check(_ count: Int, _ side: String) { check((0..<count).map(RequestKind.init), side) }

    /// Stops the driver if the requests, of these kinds, did not end as their kinds allow.
    func check(_ expected: [RequestKind], _ side: String) {
        let counts = (
            succeeded.load(ordering: .relaxed), timedOut.load(ordering: .relaxed), cancelled.load(ordering: .relaxed)
        )
        guard wrong.load(ordering: .relaxed) == 0, counts.0 == expected.filter({ $0 == .completes }).count,
            counts.1 == expected.filter({ $0 == .timesOut }).count,
            counts.2 == expected.filter({ $0 == .cancelledByClient }).count
        else { fatalError("15 \(side): outcomes \(counts), \(wrong.load(ordering: .relaxed)) wrong") }
    }
}

/// Counts arrivals down to zero; the last one resumes the one waiting task. Both sides wait with it.
final class AsyncCountdown: Sendable {
    // Sendable: its state is behind a Mutex.
    private let state: Mutex<(remaining: Int, waiter: CheckedContinuation<Void, Never>?)>

    init(_ count: Int) { state = Mutex((count, nil)) }

    func arrive() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let finished = state.withLock { state in
                if state.remaining == 0 { return true }
                state.waiter = continuation
                return false
            }
            if finished { continuation.resume() }
        }
    }
}

// MARK: - FutureLib

/// `count` requests the FutureLib way, on `shutdown`; returns once every one has reported.
func futureLibRequests(_ count: Int, shutdown: CancellationToken) async {
    let done = AsyncCountdown(count)
    let outcomes = Outcomes()
    var connections: [CancellationRequest] = []
    var operations: [Promise<Int>] = []
    connections.reserveCapacity(count)
    operations.reserveCapacity(count)
    for index in 0..<count {
        let kind = RequestKind(index)
        let client = CancellationRequest()
        let request = CancellationRequest(linkedTo: [shutdown, client.token])
        request.cancel(after: kind.deadline)
        let token = request.token
        let operation = Promise<Int>()
        operation.future
            .map(on: .synchronous, cancellationToken: token) { $0 &+ 1 }
            .flatMap(on: .synchronous, cancellationToken: token) { Future(value: String($0)) }
            .onComplete(on: .synchronous) { result in
                outcomes.record(kind, succeeded: (try? result.get()) != nil, timedOut: false)
                done.arrive()
            }
        connections.append(client)
        operations.append(operation)
    }
    for index in 0..<count where RequestKind(index) == .completes { operations[index].fulfill(index) }
    for index in 0..<count where RequestKind(index) == .cancelledByClient { connections[index].cancel() }
    await done.wait()
    for operation in operations { operation.fulfill(0) }
    outcomes.check(count, "FutureLib")
}

// MARK: - Swift concurrency

/// An operation of the backend for async callers: a continuation behind a lock, resumed once, by the backend or by
/// cancellation, whichever comes first (how a callback API is wrapped with `withTaskCancellationHandler`).
final class BackendOperation: Sendable {
    // Sendable: its state is behind a Mutex.
    private enum State {
        case idle
        case waiting(CheckedContinuation<Int, any Error>)
        case completed(Int)
        case cancelled
        case finished
    }

    private let state = Mutex(State.idle)

    /// The operation's result, or `CancellationError` if the task is cancelled first.
    func value() async throws -> Int {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let resume = state.withLock { state -> Result<Int, any Error>? in
                    switch state {
                    case .idle:
                        state = .waiting(continuation)
                        return nil
                    case .completed(let value):
                        state = .finished
                        return .success(value)
                    case .cancelled, .waiting, .finished:
                        state = .finished
                        return .failure(CancellationError())
                    }
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }

    /// The backend's completion; nothing if the caller gave up before.
    func complete(_ value: Int) { finish(.success(value)) }

    private func finish(_ result: Result<Int, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Int, any Error>? in
            switch state {
            case .idle:
                if case .success(let value) = result { state = .completed(value) } else { state = .cancelled }
                return nil
            case .waiting(let continuation):
                state = .finished
                return continuation
            case .completed, .cancelled, .finished:
                return nil
            }
        }
        waiter?.resume(with: result)
    }
}

/// Shutdown for tasks: the tasks of the requests in flight, which `shutDown()` cancels (the part of
/// swift-service-lifecycle's graceful shutdown that reaches a request).
final class ShutdownRegistry: Sendable {
    // Sendable: its state is behind a Mutex.
    private let state = Mutex<(tasks: [Int: Task<Void, Never>], finishedEarly: Set<Int>)>(([:], []))
    private let issued = Atomic<Int>(0)

    /// The first of `count` new request ids.
    func ids(_ count: Int) -> Int { issued.add(count, ordering: .relaxed).oldValue }

    /// Called by the server after starting the task of request `id`.
    func insert(_ id: Int, _ task: Task<Void, Never>) {
        state.withLock { state in
            if state.finishedEarly.remove(id) == nil { state.tasks[id] = task }
        }
    }

    /// Called by the task of request `id` when it ends (possibly before `insert`).
    func remove(_ id: Int) {
        state.withLock { state in
            if state.tasks.removeValue(forKey: id) == nil { state.finishedEarly.insert(id) }
        }
    }

    func shutDown() {
        for task in state.withLock({ Array($0.tasks.values) }) { task.cancel() }
    }
}

/// The error of a request whose deadline passed first.
struct DeadlineExceeded: Error {}

/// The second step of a request (its `flatMap`): could suspend, does not here, like FutureLib's completed future.
func render(_ value: Int) async throws -> String { String(value) }

/// `count` requests the Swift-concurrency way, registered on `shutdown`; returns once every one has reported.
func taskRequests(_ count: Int, shutdown: ShutdownRegistry) async {
    let firstID = shutdown.ids(count)
    let done = AsyncCountdown(count)
    let outcomes = Outcomes()
    var connections: [Task<Void, Never>] = []
    var operations: [BackendOperation] = []
    connections.reserveCapacity(count)
    operations.reserveCapacity(count)
    for index in 0..<count {
        let kind = RequestKind(index)
        let id = firstID + index
        let operation = BackendOperation()
        let task = Task {
            var success = false
            var timeout = false
            do {
                _ = try await withThrowingTaskGroup(of: String.self) { group in
                    group.addTask {
                        let value = try await operation.value()
                        return try await render(value &+ 1)
                    }
                    group.addTask {
                        try await Task.sleep(for: kind.deadline)
                        throw DeadlineExceeded()
                    }
                    defer { group.cancelAll() }
                    return try await group.next()!
                }
                success = true
            } catch is DeadlineExceeded {
                timeout = true
            } catch {}
            shutdown.remove(id)
            outcomes.record(kind, succeeded: success, timedOut: timeout)
            done.arrive()
        }
        shutdown.insert(id, task)
        connections.append(task)
        operations.append(operation)
    }
    for index in 0..<count where RequestKind(index) == .completes { operations[index].complete(index) }
    for index in 0..<count where RequestKind(index) == .cancelledByClient { connections[index].cancel() }
    await done.wait()
    for operation in operations { operation.complete(0) }
    outcomes.check(count, "Swift concurrency")
}

/// `loops` request loops of `perLoop` requests each, the FutureLib way, run at once, one child task each (as a server
/// with an event loop per core runs them: each loop's requests on its own thread, all on the one shutdown token);
/// returns once every one has reported.
func futureLibRequests(loops: Int, perLoop: Int, shutdown: CancellationToken) async {
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<loops {
            group.addTask { await futureLibRequests(perLoop, shutdown: shutdown) }
        }
    }
}

/// 15-loops. the server pattern, per request, with FutureLib's requests on as many loops as the machine has
/// processors: the Swift-concurrency side's tasks spread over the cooperative pool, whose threads are as many.
func serverRequestsOnEveryProcessor() -> Scenario {
    let count = 10_000
    let loops = max(1, ProcessInfo.processInfo.activeProcessorCount)
    // Whole cycles of 20 per loop, so that each loop has the scenario's mix of outcomes exactly.
    let perLoop = max(20, count / loops / 20 * 20)
    let shutdown = CancellationRequest()
    let registry = ShutdownRegistry()
    return Scenario(
        key: "15-loops",
        name: "15 server request, FutureLib on \(loops) request loops at once (one per processor), per request",
        futureLib: Side(name: "FutureLib", operations: loops * perLoop) {
            await futureLibRequests(loops: loops, perLoop: perLoop, shutdown: shutdown.token)
        },
        peer: Side(name: "Task + task group + withTaskCancellationHandler", operations: count) {
            await taskRequests(count, shutdown: registry)
        }
    )
}

/// 15. the server pattern, per request.
func serverRequests() -> Scenario {
    let count = 10_000
    let shutdown = CancellationRequest()
    let registry = ShutdownRegistry()
    return Scenario(
        key: "15",
        name: "15 server request (shutdown + client + deadline, map, flatMap, completion), per request",
        futureLib: Side(name: "FutureLib", operations: count) {
            await futureLibRequests(count, shutdown: shutdown.token)
        },
        peer: Side(name: "Task + task group + withTaskCancellationHandler", operations: count) {
            await taskRequests(count, shutdown: registry)
        }
    )
}

// MARK: - Memory in flight

/// The resident set in bytes, from /proc/self/statm (0 where there is none).
func residentBytes() -> Int {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// A count shared between threads: the tasks of the in-flight measurement that have started their work, the
/// requests of `--server-allocations` that have reported.
final class SharedCount: Sendable {
    // Sendable: an Atomic.
    let value = Atomic<Int>(0)
}

/// `RoundsDriver --in-flight futurelib|tasks [count]`: the heap (`mallinfo2`, mapped blocks included) and the
/// resident set that `count` requests of scenario 15 hold while all are in flight (every operation pending, every
/// deadline an hour away), measured in a fresh process per side (the resident set of a process does not shrink back
/// when the other side frees). Prints one JSON line.
func measureInFlight(side: String, count: Int) async {
    func heapBytes() -> Int { Int(malloc_info_bytes_in_use()) + Int(malloc_info_bytes_mapped()) }
    // Warm up: threads, pools and slabs of one small run of the side first.
    let shutdown = CancellationRequest()
    let registry = ShutdownRegistry()
    if side == "futurelib" {
        await futureLibRequests(1_000, shutdown: shutdown.token)
    } else {
        await taskRequests(1_000, shutdown: registry)
    }
    let heapBefore = heapBytes()
    let residentBefore = residentBytes()
    let done = AsyncCountdown(count)
    var held: [AnyObject] = []
    held.reserveCapacity(2 * count)
    if side == "futurelib" {
        for _ in 0..<count {
            let client = CancellationRequest()
            let request = CancellationRequest(linkedTo: [shutdown.token, client.token])
            request.cancel(after: .seconds(3_600))
            let token = request.token
            let operation = Promise<Int>()
            operation.future
                .map(on: .synchronous, cancellationToken: token) { $0 &+ 1 }
                .flatMap(on: .synchronous, cancellationToken: token) { Future(value: String($0)) }
                .onComplete(on: .synchronous) { _ in done.arrive() }
            held.append(client)
            held.append(operation)
        }
    } else {
        let waiting = SharedCount()
        let firstID = registry.ids(count)
        var tasks: [Task<Void, Never>] = []
        tasks.reserveCapacity(count)
        for index in 0..<count {
            let operation = BackendOperation()
            let task = Task {
                _ = try? await withThrowingTaskGroup(of: String.self) { group in
                    group.addTask {
                        waiting.value.add(1, ordering: .relaxed)
                        let value = try await operation.value()
                        return try await render(value &+ 1)
                    }
                    group.addTask {
                        try await Task.sleep(for: .seconds(3_600))
                        throw DeadlineExceeded()
                    }
                    defer { group.cancelAll() }
                    return try await group.next()!
                }
                registry.remove(firstID + index)
                done.arrive()
            }
            registry.insert(firstID + index, task)
            tasks.append(task)
            held.append(operation)
        }
        // Every request's work has started (and is about to wait for its operation): the tasks are in flight.
        while waiting.value.load(ordering: .relaxed) < count { await Task.yield() }
        try? await Task.sleep(for: .milliseconds(100))
        withExtendedLifetime(tasks) {}
    }
    let heap = heapBytes() - heapBefore
    let resident = residentBytes() - residentBefore
    print(
        "{\"side\": \"\(side)\", \"requests\": \(count), \"heap_bytes\": \(heap), \"resident_bytes\": \(resident), "
            + "\"heap_bytes_per_request\": \(Double(heap) / Double(count))}"
    )
    for object in held {
        if let operation = object as? Promise<Int> { operation.fulfill(1) }
        if let operation = object as? BackendOperation { operation.complete(1) }
    }
    await done.wait()
}

// MARK: - Where FutureLib's allocations go

/// `RoundsDriver --server-allocations`: the mallocs per request of each step of scenario 15's FutureLib side, each
/// step for 10,000 requests at once (the second of two passes: the first warms slabs and pools up), for each of the
/// three outcomes: the operation completes, the client goes away, the deadline passes.
func serverAllocations() {
    for outcome in RequestKind.allCases {
        print("\(outcome.rawValue):")
        serverAllocations(outcome)
    }
}

private func serverAllocations(_ outcome: RequestKind) {
    let count = 10_000
    let shutdown = CancellationRequest()
    for pass in 0..<2 {
        var steps: [(String, Double)] = []
        func counted<T>(_ step: String, _ body: () -> T) -> T {
            malloc_counter_start()
            let result = body()
            steps.append((step, Double(malloc_counter_stop()) / Double(count)))
            return result
        }
        let deadline = outcome.deadline
        var clients = counted("client CancellationRequest()") { (0..<count).map { _ in CancellationRequest() } }
        var requests = counted("CancellationRequest(linkedTo: [shutdown, client])") {
            clients.map { CancellationRequest(linkedTo: [shutdown.token, $0.token]) }
        }
        counted("cancel(after: \(outcome == .timesOut ? "1 ms" : "1 hour"))") {
            for request in requests { request.cancel(after: deadline) }
        }
        var operations = counted("Promise()") { (0..<count).map { _ in Promise<Int>() } }
        var mapped = counted("map(on: .synchronous, cancellationToken:)") {
            (0..<count).map {
                operations[$0].future.map(on: .synchronous, cancellationToken: requests[$0].token) { $0 &+ 1 }
            }
        }
        var rendered = counted("flatMap(on: .synchronous, cancellationToken:)") {
            (0..<count).map {
                mapped[$0].flatMap(on: .synchronous, cancellationToken: requests[$0].token) {
                    Future(value: String($0))
                }
            }
        }
        let reported = SharedCount()
        let outcomes = Outcomes()
        // The scenario's closure: it captures a value and two objects, so Swift allocates a context for each one.
        counted("onComplete(on: .synchronous) (1: the context of the scenario's closure)") {
            for future in rendered {
                future.onComplete(on: .synchronous) { result in
                    outcomes.record(outcome, succeeded: (try? result.get()) != nil, timedOut: false)
                    reported.value.add(1, ordering: .relaxed)
                }
            }
        }
        switch outcome {
        case .completes:
            counted("fulfil (runs the map, the flatMap's closure and its future, the completion)") {
                for (index, operation) in operations.enumerated() { operation.fulfill(index) }
            }
        case .cancelledByClient:
            counted("the client's cancel() (cancels the request, fails the chain, stops the timer)") {
                for client in clients { client.cancel() }
            }
        case .timesOut:
            // The timer thread cancels the requests; the count covers it, from arming to the last completion.
            counted("the deadline fires (cancels the request, fails the chain), waited for") {
                while reported.value.load(ordering: .relaxed) < count { usleep(100) }
            }
        }
        precondition(reported.value.load(ordering: .relaxed) == count, "every request reports")
        outcomes.check(Array(repeating: outcome, count: count), outcome.rawValue)
        if outcome != .completes {
            counted("the backend completes the operation late (nobody listens)") {
                for (index, operation) in operations.enumerated() { operation.fulfill(index) }
            }
        }
        counted("the request, its client and its chain released (the timer stopped, the links removed)") {
            (clients, requests, operations, mapped, rendered) = ([], [], [], [], [])
        }
        if pass == 1 {
            for (step, mallocs) in steps { print("\(mallocs) \(step)") }
            print("\(steps.reduce(0) { $0 + $1.1 }) in all")
        }
    }
}
