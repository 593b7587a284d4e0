import FutureLib
import FutureTestSupport
import TestSupport

/// What a handler or continuation saw when it ran.
enum ModelOutcome: Equatable, Sendable, CustomStringConvertible {
    /// A cancellation handler ran.
    case ran
    case value(Int)
    case failure(code: Int)
    case cancelled
    case brokenPromise
    case unexpected(String)

    init(_ result: Result<Int, any Error>) {
        switch result {
        case .success(let value): self = .value(value)
        case .failure(let error): self.init(error)
        }
    }

    init(_ error: any Error) {
        switch error {
        case let failure as TestFailure: self = .failure(code: failure.code)
        case is CancellationError: self = .cancelled
        case FutureError.brokenPromise: self = .brokenPromise
        default: self = .unexpected("\(error)")
        }
    }

    var description: String {
        switch self {
        case .ran: "ran"
        case .value(let value): "value \(value)"
        case .failure(let code): "failure \(code)"
        case .cancelled: "CancellationError"
        case .brokenPromise: "brokenPromise"
        case .unexpected(let text): "unexpected \(text)"
        }
    }
}

/// One run of a handler or continuation.
struct ModelRun: Sendable {
    /// Global order of runs within the scenario.
    var sequence: Int
    /// Which worker thread ran it (nil: another thread, e.g. a timer's or the serial queue's).
    var worker: Int?
    /// Whether it ran inside the `onCancel`/`observe` call that registered it.
    var insideRegistration: Bool
    /// Whether it ran on the scenario's serial queue.
    var onSerialQueue: Bool
    var outcome: ModelOutcome
}

/// Records the runs of handlers and continuations. The closures capture only this object, never
/// the ``ModelWorld``: a handler stored in a request that captured the world which owns the
/// request would be a reference cycle (LeakSanitizer found it in `make asan`).
final class ModelRecorder: Sendable {
    let queue = ProbedQueue(label: "FutureLibTests.model")
    let workers = Locked<[ThreadID?]>(Array(repeating: nil, count: ModelScenario.threadCount))
    /// Per operation id: every run of its handler or continuation.
    let runs = Locked<[Int: [ModelRun]]>([:])
    /// Per request: whether its cancellation pass has finished (a handler registered first, so
    /// it runs last: newest first). The flag `isCancellationRequested` turns true before the
    /// pass starts, so it cannot tell that a timer's pass is done.
    let passFinished = (0..<ModelScenario.requestCount).map { _ in Counter() }
    private let sequence = Counter()
    /// Per worker thread: the id of the handler or continuation it is registering right now (-1: none).
    private let registering = (0..<ModelScenario.threadCount).map { _ in Locked(-1) }

    func record(_ id: Int, _ outcome: ModelOutcome) {
        let current = ThreadID.current
        let worker = workers.value.firstIndex { $0 == current }
        let inside = worker.map { registering[$0].value == id } ?? false
        let run = ModelRun(
            sequence: sequence.increment(),
            worker: worker,
            insideRegistration: inside,
            onSerialQueue: queue.isCurrent,
            outcome: outcome
        )
        runs.withLock { $0[id, default: []].append(run) }
    }

    func registering(_ id: Int, on thread: Int, _ body: () -> Void) {
        registering[thread].withLock { $0 = id }
        body()
        registering[thread].withLock { $0 = -1 }
    }
}

/// The objects of one scenario run and everything the threads observed. Operations record into
/// it from any thread; the checker reads it after the threads have joined.
final class ModelWorld: Sendable {
    let requests: [CancellationRequest]
    /// Dropped (set to nil) by the checker after the run, so unresolved ones break their futures.
    let promises: Locked<[Promise<Int>?]>
    let futures: [Future<Int>]
    let recorder = ModelRecorder()
    var queue: ProbedQueue { recorder.queue }
    var workers: Locked<[ThreadID?]> { recorder.workers }
    var runs: Locked<[Int: [ModelRun]]> { recorder.runs }

    private let registrations = Locked<[Int: CancellationRegistration]>([:])
    /// Per operation id: what `unregister()` or `tryFulfill`/`tryReject` returned.
    let returned = Locked<[Int: Bool]>([:])

    init() {
        var requests = (0..<ModelScenario.plainRequestCount).map { _ in CancellationRequest() }
        requests.append(CancellationRequest(linkedTo: ModelScenario.linkedSources.map { requests[$0].token }))
        self.requests = requests
        for (index, request) in requests.enumerated() {
            let finished = recorder.passFinished[index]
            request.token.onCancel { finished.increment() }
        }
        let promises = (0..<ModelScenario.promiseCount).map { _ in Promise<Int>() }
        self.promises = Locked(promises)
        futures = promises.map(\.future)
    }

    private func token(_ index: Int?) -> CancellationToken {
        index.map { requests[$0].token } ?? .none
    }

    private func promise(_ index: Int) -> Promise<Int>? {
        promises.withLock { $0[index] }
    }

    // MARK: - Operations

    /// Runs one operation on the calling worker thread.
    func perform(_ operation: ModelOperation) {
        let id = operation.id
        let thread = operation.thread
        let recorder = recorder
        switch operation.kind {
        case .register(let request):
            recorder.registering(id, on: thread) {
                let registration = requests[request].token.onCancel { recorder.record(id, .ran) }
                registrations.withLock { $0[id] = registration }
            }
        case .unregister(let handler):
            let registration = registrations.withLock { $0[handler] }
            let removed = registration?.unregister() ?? false
            returned.withLock { $0[id] = removed }
        case .cancel(let request):
            requests[request].cancel()
        case .cancelAfter(let request, let microseconds):
            requests[request].cancel(after: .microseconds(microseconds))
        case .link(let sources):
            recorder.registering(id, on: thread) {
                // The linked request is dropped at once: the registration keeps it cancellable by its sources.
                let linked = CancellationRequest(linkedTo: sources.map { requests[$0].token })
                let registration = linked.token.onCancel { recorder.record(id, .ran) }
                registrations.withLock { $0[id] = registration }
            }
        case .fulfill(let index, let value):
            let resolved = promise(index)?.tryFulfill(value) ?? false
            returned.withLock { $0[id] = resolved }
        case .reject(let index, let code):
            let resolved = promise(index)?.tryReject(TestFailure(code: code)) ?? false
            returned.withLock { $0[id] = resolved }
        case .observe(let index, let callback, let serial, let tokenIndex):
            let future = futures[index]
            let context: any ExecutionContext = serial ? queue.queue : SynchronousExecutionContext()
            let token = token(tokenIndex)
            recorder.registering(id, on: thread) {
                switch callback {
                case .onComplete:
                    future.onComplete(on: context, cancellationToken: token) { recorder.record(id, ModelOutcome($0)) }
                case .onSuccess:
                    future.onSuccess(on: context, cancellationToken: token) { recorder.record(id, .value($0)) }
                case .onFailure:
                    future.onFailure(on: context, cancellationToken: token) { recorder.record(id, ModelOutcome($0)) }
                }
            }
        case .combine(let combinator, let sources, let tokenIndex):
            let token = token(tokenIndex)
            let source = futures[sources[0]]
            let combined: Future<Int>
            switch combinator {
            case .map:
                combined = source.map(on: .synchronous, cancellationToken: token) { $0 * 2 }
            case .flatMap:
                combined = source.flatMap(on: .synchronous, cancellationToken: token) { Future(value: $0 + 1) }
            case .recover:
                combined = source.recover(on: .synchronous, cancellationToken: token) { _ in -1 }
            case .zip:
                combined = zip(source, futures[sources[1]], cancellationToken: token)
                    .map(on: .synchronous) { $0 * 1000 + $1 }
            }
            recorder.registering(id, on: thread) {
                combined.onComplete(on: .synchronous) { recorder.record(id, ModelOutcome($0)) }
            }
        }
    }
}
