public import FutureLibConcurrencyHelpers  // public: inlinable code uses its lock
import Synchronization

/// The state of one `traverse`: which elements have started, the values so far, and how many run.
@usableFromInline
final class Traversal<Element: Sendable, U: Sendable>: Sendable {
    @usableFromInline
    struct State: Sendable {
        @usableFromInline var nextIndex = 0
        @usableFromInline var running = 0
        @usableFromInline var finished = 0
        @usableFromInline var values: [U?]
        /// A thread is starting tasks right now.
        @usableFromInline var isStarting = false
        /// Slots freed while another thread was starting: it must look again.
        @usableFromInline var moreToStart = false
        /// The elements not started yet, and `task` until the last task has started or the
        /// traversal has failed.
        ///
        /// The rest is let go: the continuations on tasks still pending keep this object, and a
        /// capture of the caller's here (the promise whose future a task returns, or elements that
        /// are promises) would keep that promise, and so its pending future, alive for good: a
        /// cycle in which the promise never breaks (`LifetimeTests`, "a failed traverse lets go of
        /// its closure and elements, …").
        @usableFromInline var elements: [Element?]
        @usableFromInline var task: (@Sendable (Element) -> Future<U>)?

        @inlinable
        init(elements: [Element], task: @escaping @Sendable (Element) -> Future<U>) {
            self.values = Array(repeating: nil, count: elements.count)
            self.elements = elements
            self.task = task
        }

        /// Lets go of the elements and `task`, handing them to the caller to release after the lock.
        @inlinable
        mutating func takeStarters() -> ([Element?], (@Sendable (Element) -> Future<U>)?) {
            defer {
                elements = []
                task = nil
            }
            return (elements, task)
        }
    }

    /// Tasks claimed by one thread to start, outside the lock.
    @usableFromInline
    struct Batch: Sendable {
        @usableFromInline let indices: Range<Int>
        @usableFromInline let elements: [Element]
        @usableFromInline let task: @Sendable (Element) -> Future<U>

        @inlinable
        init(indices: Range<Int>, elements: [Element], task: @escaping @Sendable (Element) -> Future<U>) {
            self.indices = indices
            self.elements = elements
            self.task = task
        }
    }

    @usableFromInline let future = Future<[U]>()
    @usableFromInline let count: Int
    @usableFromInline let maxConcurrency: Int
    @usableFromInline let context: any ExecutionContext
    @usableFromInline let cancellationToken: CancellationToken
    @usableFromInline let state: Lock<State>

    @inlinable
    init(
        elements: [Element],
        maxConcurrency: Int,
        context: any ExecutionContext,
        cancellationToken: CancellationToken,
        task: @escaping @Sendable (Element) -> Future<U>
    ) {
        self.count = elements.count
        self.maxConcurrency = maxConcurrency
        self.context = context
        self.cancellationToken = cancellationToken
        self.state = Lock(State(elements: elements, task: task))
    }

    @inlinable
    func start() {
        if future.failIfCancelled(cancellationToken) { return }
        guard count > 0 else {
            future.complete(with: .success([]))
            return
        }
        future.cancelOnRequest(of: cancellationToken)
        startMore()
    }

    /// Claims free slots under the lock, then starts those tasks outside it.
    @inlinable
    func startMore() {
        // One thread starts tasks at a time, so that they start in input order even when several
        // complete at once on different threads; the others leave a note for it and return.
        while !future.isCompleted {  // failed or cancelled: start nothing more
            let batch = state.withLock { state -> Batch? in
                guard !state.isStarting else {
                    state.moreToStart = true
                    return nil
                }
                state.moreToStart = false
                let claimed = Swift.min(maxConcurrency - state.running, count - state.nextIndex)
                guard claimed > 0, let task = state.task else { return nil }  // nil: failed meanwhile
                let indices = state.nextIndex..<(state.nextIndex + claimed)
                // Taken out: each is retained by the batch, so nothing is freed here, under the lock.
                let elements = indices.map { state.elements[$0].take()! }
                let batch = Batch(indices: indices, elements: elements, task: task)
                state.isStarting = true
                state.nextIndex += claimed
                state.running += claimed
                // The last tasks: nothing more to start. The batch holds `task` (and the emptied
                // array is small), so nothing of the caller's is freed here, under the lock.
                if state.nextIndex == count {
                    state.elements = []
                    state.task = nil
                }
                return batch
            }
            guard let batch else { return }
            for (index, element) in Swift.zip(batch.indices, batch.elements) { run(index, element, batch.task) }
            let again = state.withLock { state in
                state.isStarting = false
                return state.moreToStart
            }
            guard again else { return }
        }
    }

    @inlinable
    func run(_ index: Int, _ element: Element, _ task: @escaping @Sendable (Element) -> Future<U>) {
        context.execute { [self] in
            guard !future.isCompleted else { return }  // failed or cancelled meanwhile: start nothing
            task(element).observe(
                on: .synchronous,
                cancellationToken: cancellationToken,
                .result { [self] result in
                    finish(index, with: result)
                }
            )
        }
    }

    @inlinable
    func finish(_ index: Int, with result: Result<U, any Error>) {
        let value: U
        switch result {
        case .success(let success): value = success
        case .failure(let error):
            future.complete(with: .failure(error))  // the first failure in time
            // Released after the lock: a capture's `deinit` (a promise breaking) may come back here.
            let (elements, task) = state.withLock { $0.takeStarters() }
            withExtendedLifetime(elements) {}
            _ = consume task
            return
        }
        let done = state.withLock { state -> Bool in
            state.values[index] = value
            state.running -= 1
            state.finished += 1
            return state.finished == count
        }
        if done {
            let values = state.withLock { state in
                defer { state.values = [] }
                return state.values.map { $0! }
            }
            future.complete(with: .success(values))
        } else {
            startMore()
        }
    }
}
