import FutureLibConcurrencyHelpers

/// Async jobs run one at a time, in the order they were enqueued: a task at `placement` (cancelled
/// by the token) drains the queue while it is not empty, and the next job starts a new one.
final class SerialJobs: Sendable {
    typealias Job = @Sendable () async -> Void

    private let placement: TaskPlacement
    private let cancellationToken: CancellationToken
    private let state = Lock((jobs: [Job](), isDraining: false))

    init(placement: TaskPlacement, cancellationToken: CancellationToken) {
        self.placement = placement
        self.cancellationToken = cancellationToken
    }

    func enqueue(_ job: @escaping Job) {
        let startsDrain = state.withLock { state in
            state.jobs.append(job)
            guard !state.isDraining else { return false }
            state.isDraining = true
            return true
        }
        if startsDrain { placement.start(cancellationToken: cancellationToken) { await self.drain() } }
    }

    private func drain() async {
        while true {
            // Taken out of the lock as a whole: the jobs (and the user values they hold) are
            // released outside it.
            let jobs = state.withLock { state in
                let jobs = state.jobs
                state.jobs = []
                if jobs.isEmpty { state.isDraining = false }
                return jobs
            }
            if jobs.isEmpty { return }
            for job in jobs { await job() }
        }
    }
}
