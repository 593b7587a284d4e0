import AsyncHTTPClient
import Cancellation
import FutureLib
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// One call of ``AsyncHTTPClient/HTTPClient/execute(_:timeout:upTo:logger:deadlineHeader:cancellationToken:)``:
/// the request, its promise, the task that runs it, and where that task's code runs.
///
/// One object for all of it, so that a call costs few allocations: the task's closure and the token's handler
/// capture this object alone (a closure whose only capture is an object needs no context of its own), and it is
/// the task's executor too.
///
/// ### Where the task runs
/// AsyncHTTPClient resumes a request's task from the event loop its connection is on. The task prefers this
/// executor, which runs each of its jobs on the event loop that enqueued it (at the end of that loop's current
/// turn: no other thread is woken), or on `home`, a loop of the client's group, when it was enqueued from
/// elsewhere. So the call needs no thread that a plain AsyncHTTPClient call does not wake, and no free
/// cooperative thread: a `value()` blocking the cooperative pool cannot starve it.
///
/// ### Cancellation
/// The token's handler fails the promise with `CancellationError` first, then cancels the task, which makes
/// AsyncHTTPClient cancel the request (closing its connection). The task's handle is published through `state`,
/// since the handler may run before the task exists:
/// `starting` → `running` (the handle is stored) or `cancelled` (the handler ran); whichever comes second
/// cancels the task.
final class CollectedRequest: TaskExecutor, Sendable {
    private static let starting = 0
    private static let running = 1
    private static let cancelled = 2

    let client: HTTPClient
    let request: HTTPClientRequest
    let timeout: TimeAmount
    let maxBodyBytes: Int
    let logger: Logger?
    let cancellationToken: CancellationToken
    let promise = Promise<HTTPClientResponse>()
    private let home: any EventLoop
    private let state = Atomic(CollectedRequest.starting)
    // Sendable: `task` is written once, by `start()` before it publishes `running` in `state` (releasing), and
    // read only by the token's handler after it read `running` there (acquiring). `registration` is written once,
    // by `start()` before it creates the task, and read only by that task.
    nonisolated(unsafe) private var task: Task<Void, Never>?
    nonisolated(unsafe) private var registration: CancellationRegistration?
    /// Whether `pendingJob` holds a job (see ``enqueue(_:)``).
    private let pendingJobSlot = Atomic(false)
    // Sendable: written by `enqueue(_:)` after it took `pendingJobSlot` (acquiring), read and cleared by the loop's
    // closure, which the loop's queue (a lock) orders after that write, before it frees the slot (releasing).
    nonisolated(unsafe) private var pendingJob: UnownedJob?

    init(
        client: HTTPClient,
        request: HTTPClientRequest,
        timeout: TimeAmount,
        maxBodyBytes: Int,
        logger: Logger?,
        cancellationToken: CancellationToken
    ) {
        self.client = client
        self.request = request
        self.timeout = timeout
        self.maxBodyBytes = maxBodyBytes
        self.logger = logger
        self.cancellationToken = cancellationToken
        self.home = client.eventLoopGroup.any()
    }

    /// Registers on the token (a token that can never fire gets nothing), then starts the task.
    func start() {
        if cancellationToken.canBeCancelled {
            registration = cancellationToken.onCancel { [self] in cancel() }
        }
        let task: Task<Void, Never>
        if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
            // Runs on this thread up to AsyncHTTPClient's first suspension, with no job and no wake-up.
            task = Task.immediate(executorPreference: self) { [self] in await run() }
        } else {
            task = Task(executorPreference: self) { [self] in await run() }
        }
        self.task = task
        if !state.compareExchange(
            expected: Self.starting,
            desired: Self.running,
            ordering: .acquiringAndReleasing  // publishes `task` to the handler
        ).exchanged {
            task.cancel()  // the handler ran before the handle existed
        }
    }

    /// The token's handler: the token wins at once, then the request is cancelled.
    private func cancel() {
        promise.tryReject(CancellationError())
        if state.exchange(Self.cancelled, ordering: .acquiringAndReleasing) == Self.running {
            task?.cancel()
        }
    }

    /// The task's body: the request and its whole body, then the promise.
    private func run() async {
        defer { registration?.unregister() }
        // Cancelled before the task started: nothing is sent (the handler failed the promise).
        if cancellationToken.isCancellationRequested { return }
        do {
            let response = try await client.execute(request, timeout: timeout, logger: logger)
            let body = try await response.body.collect(upTo: maxBodyBytes)
            promise.tryFulfill(
                HTTPClientResponse(
                    version: response.version,
                    status: response.status,
                    headers: response.headers,
                    body: .bytes(body),
                    history: response.history
                )
            )
        } catch {
            // The handler cancelled the task and failed the promise first: the token wins.
            promise.tryReject(error)
        }
    }

    // MARK: - TaskExecutor

    /// Runs `job` on the event loop that enqueues it, or on `home` from any other thread.
    ///
    /// A task has one job enqueued at a time, so the job waits in `pendingJob` and the closure handed to the loop
    /// captures this object alone: no allocation per job. A second job while one waits (a child task, which
    /// inherits this preference) gets a closure of its own.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? home
        // Acquiring: the job that `runPendingJob()` took out of the slot before releasing it is gone.
        if pendingJobSlot.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            pendingJob = job
            loop.execute { [self] in runPendingJob() }
        } else {
            loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    private func runPendingJob() {
        guard let job = pendingJob else { return }
        pendingJob = nil
        pendingJobSlot.store(false, ordering: .releasing)
        job.runSynchronously(on: asUnownedTaskExecutor())
    }
}
