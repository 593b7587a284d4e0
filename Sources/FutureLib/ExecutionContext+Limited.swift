import ConcurrencyHelpers
import Synchronization

/// A context that runs at most ``maxConcurrency`` jobs at once on another context, and queues the rest.
///
/// Use it to protect a resource (a database pool, an API's rate limit) or to bound memory:
///
/// ```swift
/// let fourAtATime = LimitedExecutionContext(maxConcurrency: 4)
/// let thumbnails = urls.map { url in Future(on: fourAtATime) { try render(url) } }
/// ```
///
/// ### Semantics
/// - Jobs start in submission order (FIFO).
/// - A slot frees when a job returns; the next queued job then starts on the base context.
/// - The queue keeps a job only until it starts: a job that ran, and what it captured, is
///   released even while later jobs still wait.
/// - ``maxConcurrency`` can be raised or lowered at any time: raising starts queued jobs at once,
///   lowering lets running jobs finish and starts new ones only below the new cap.
/// - A job is the synchronous closure: work that returns a future and goes on asynchronously
///   has returned as far as this context is concerned. To cap asynchronous work, use
///   `traverse(maxConcurrency:)`.
public final class LimitedExecutionContext: ExecutionContext {
    private struct State: ~Copyable {
        var limit: Int
        var running = 0
        /// Jobs waiting for a slot; each is released as it starts.
        var queue = FIFO<@Sendable () -> Void>()

        var hasQueued: Bool { !queue.isEmpty }

        mutating func dequeue() -> @Sendable () -> Void {
            queue.popFirst()!
        }
    }

    private let base: any ExecutionContext
    private let state: Lock<State>

    /// Creates a context that runs at most `maxConcurrency` jobs at once on `base`.
    ///
    /// ```swift
    /// let serialOnPool = LimitedExecutionContext(maxConcurrency: 1)  // a serial context
    /// ```
    ///
    /// A `maxConcurrency` below 1 is a programming error: it stops with a precondition failure
    /// that names the argument.
    ///
    /// - Parameters:
    ///   - maxConcurrency: The cap; at least 1.
    ///   - base: Where jobs run. Defaults to ``ExecutionContext/default``.
    public init(maxConcurrency: Int, on base: any ExecutionContext = .default) {
        precondition(
            maxConcurrency >= 1,
            "LimitedExecutionContext: maxConcurrency must be at least 1, got \(maxConcurrency)"
        )
        self.base = base
        self.state = Lock(State(limit: maxConcurrency))
    }

    /// The most jobs that run at once. Settable at any time, from any thread; at least 1.
    ///
    /// ```swift
    /// context.maxConcurrency = 8  // starts up to 4 more queued jobs right away
    /// ```
    public var maxConcurrency: Int {
        get { state.withLock { $0.limit } }
        set {
            precondition(newValue >= 1, "LimitedExecutionContext: maxConcurrency must be at least 1, got \(newValue)")
            let startable = state.withLock { state -> [@Sendable () -> Void] in
                state.limit = newValue
                var startable: [@Sendable () -> Void] = []
                while state.running < state.limit, state.hasQueued {
                    state.running += 1
                    startable.append(state.dequeue())
                }
                return startable
            }
            for work in startable { start(work) }
        }
    }

    /// How many jobs are running now.
    ///
    /// ```swift
    /// print("\(context.runningCount) of \(context.maxConcurrency) slots in use")
    /// ```
    public var runningCount: Int {
        state.withLock { $0.running }
    }

    /// Runs `work` on the base context when a slot is free, in submission order.
    ///
    /// ```swift
    /// context.execute { importRecords() }
    /// ```
    ///
    /// - Parameter work: The code to run.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        let startNow = state.withLock { state in
            guard state.running < state.limit, !state.hasQueued else {
                state.queue.append(work)
                return false
            }
            state.running += 1
            return true
        }
        if startNow { start(work) }
    }

    private func start(_ work: @escaping @Sendable () -> Void) {
        base.execute { [self] in
            work()
            finished()
        }
    }

    private func finished() {
        let next = state.withLock { state -> (@Sendable () -> Void)? in
            if state.running <= state.limit, state.hasQueued { return state.dequeue() }  // the slot passes on
            state.running -= 1
            return nil
        }
        if let next { start(next) }
    }
}
