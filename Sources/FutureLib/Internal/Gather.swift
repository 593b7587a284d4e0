public import Synchronization  // public: `Countdown` and `Gathering` are used by inlinable code

/// The values of a `sequence()`, `results()` or `zip` as they arrive, one slot per input, and
/// the future they complete.
///
/// Each input's continuation holds this object and its own index, never the inputs: a pending
/// input that nobody else holds is released, with its continuation, and so with this object and
/// the result future once nothing else waits on them. (Reading the values from the inputs at the
/// end kept every input in the continuation they shared: a pending input kept itself, the result
/// and the other inputs for good.) An input already complete is read at once, with no
/// continuation.
@usableFromInline
final class Gathering<Element: Sendable, Output: Sendable>: @unchecked Sendable {
    // @unchecked: each slot is written once, by the one continuation of its input (its index),
    // before that continuation counts `remaining` down, and read only by the call that counted it
    // to zero: the countdown's acquiring-and-releasing ordering makes every write visible to it.
    // `slots` is never reallocated; `deinit` runs when no continuation can reach this any more.

    @usableFromInline let future: Future<Output>
    @usableFromInline let remaining: Atomic<Int>
    @usableFromInline let slots: UnsafeMutableBufferPointer<Element?>
    /// Makes the result from the values, in input order.
    @usableFromInline let output: @Sendable ([Element]) -> Output

    @inlinable
    init(_ future: Future<Output>, count: Int, output: @escaping @Sendable ([Element]) -> Output) {
        self.future = future
        self.remaining = Atomic(count)
        self.slots = .allocate(capacity: count)
        self.slots.initialize(repeating: nil)
        self.output = output
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    /// Takes input `index`'s result: a failure completes the future (the first failure in time
    /// wins); the last success completes it with every value.
    @inlinable
    func arrive(_ index: Int, _ result: Result<Element, any Error>) {
        switch result {
        case .success(let value): store(value, at: index)
        case .failure(let error): future.complete(with: .failure(error))
        }
    }

    /// Stores input `index`'s value; the last one completes the future with every value.
    @inlinable
    func store(_ value: Element, at index: Int) {
        slots[index] = value
        guard remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        var values: [Element] = []
        values.reserveCapacity(slots.count)
        for index in 0..<slots.count { values.append(slots[index].take()!) }
        future.complete(with: .success(output(values)))
    }
}

extension Future {
    /// Hands this input's result to `gathering` as input `index`: at once when it is complete,
    /// else from a continuation of its own, which holds `gathering` and the index, not this future.
    @inlinable
    func gather<Output>(into gathering: Gathering<Value, Output>, at index: Int, cancellationToken: CancellationToken) {
        if isCompleted, let result {
            gathering.arrive(index, result)
            return
        }
        observe(on: .synchronous, cancellationToken: cancellationToken, .result { gathering.arrive(index, $0) })
    }
}

/// An input of a `zip`, seen without its value type: its value reaches the gathering as
/// `any Sendable`, and the `zip` casts it back when it builds the tuple.
protocol ZipInput: Sendable {
    /// Hands this input's result to `gathering` as input `index`; see ``Future/gather(into:at:cancellationToken:)``.
    func gather<Output>(
        intoErased gathering: Gathering<any Sendable, Output>,
        at index: Int,
        cancellationToken: CancellationToken
    )
}

extension Future: ZipInput {
    func gather<Output>(
        intoErased gathering: Gathering<any Sendable, Output>,
        at index: Int,
        cancellationToken: CancellationToken
    ) {
        if isCompleted, let result {
            gathering.arrive(index, result.map { $0 })
            return
        }
        observe(
            on: .synchronous,
            cancellationToken: cancellationToken,
            .result { gathering.arrive(index, $0.map { $0 }) }
        )
    }
}

/// Counts completions down to zero from any thread.
@usableFromInline
final class Countdown: Sendable {
    @usableFromInline let remaining: Atomic<Int>

    @inlinable
    init(_ count: Int) {
        remaining = Atomic(count)
    }

    /// Counts one down; true for the call that reached zero. Acquiring and releasing, so the
    /// last caller sees everything the others did before counting.
    @inlinable
    func countDown() -> Bool {
        remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0
    }
}
