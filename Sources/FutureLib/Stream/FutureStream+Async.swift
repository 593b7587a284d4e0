// MARK: - Stream to AsyncSequence

extension FutureStream {
    /// How many results a `for await` loop may fall behind, and which ones it loses beyond that.
    ///
    /// A stream cannot make its producer wait (``StreamPromise/fulfill(_:)`` never blocks), so a
    /// loop that is slower than the producer buffers: results wait in the loop's own buffer until
    /// it asks for them.
    ///
    /// ```swift
    /// for try await frame in camera.frames.values(buffering: .bufferingNewest(1)) {
    ///     render(frame)  // a slow renderer skips stale frames
    /// }
    /// ```
    public enum BufferingPolicy: Sendable {
        /// Keeps every result: the buffer grows without bound if the loop stays behind.
        case unbounded
        /// Keeps the newest `limit` results (at least one), dropping the oldest.
        case bufferingNewest(Int)
        /// Keeps the oldest `limit` results (at least one), dropping new ones while full.
        case bufferingOldest(Int)

        /// The buffer's bound, nil for none.
        @usableFromInline var limit: Int? {
            switch self {
            case .unbounded: nil
            case .bufferingNewest(let limit), .bufferingOldest(let limit): Swift.max(limit, 1)
            }
        }

        @usableFromInline var keepsNewest: Bool {
            if case .bufferingNewest = self { return true }
            return false
        }
    }

    /// The values of the stream as an `AsyncSequence` that throws the first error.
    ///
    /// ```swift
    /// for try await location in locations.values {
    ///     print(location)
    /// }
    /// // here the stream has finished
    /// ```
    ///
    /// ### Semantics
    /// - Each loop (each iterator) is a subscriber of its own: it starts with the results the
    ///   stream keeps, then gets every new one, in order.
    /// - Buffering: the newest ``capacity`` results (at least one) wait for a loop that is behind;
    ///   older ones are dropped, as for a late subscriber. Use ``values(buffering:)`` for another
    ///   policy.
    /// - The loop ends (`next()` returns nil) when the stream finishes. An error of the stream is
    ///   thrown from `next()` and ends the loop; to go on after errors, iterate ``results`` instead.
    /// - Cancelling the loop's task ends it at once (`next()` returns nil) and unsubscribes; so
    ///   does dropping the iterator (leaving the loop with `break`).
    public var values: Values {
        Values(stream: self, policy: .bufferingNewest(capacity))
    }

    /// The values of the stream as an `AsyncSequence`, buffered for a slow loop by `policy`.
    ///
    /// ```swift
    /// for try await line in log.values(buffering: .unbounded) { archive(line) }  // loses nothing
    /// ```
    ///
    /// As ``values`` in all else.
    ///
    /// - Parameter policy: How many results wait for a loop that is behind, and which it loses.
    /// - Returns: The sequence.
    public func values(buffering policy: BufferingPolicy) -> Values {
        Values(stream: self, policy: policy)
    }

    /// Every result of the stream, values and errors, as an `AsyncSequence` that never throws.
    ///
    /// ```swift
    /// for await result in readings.results {
    ///     switch result {
    ///     case .success(let reading): plot(reading)
    ///     case .failure(let error): note(error)  // and go on
    ///     }
    /// }
    /// ```
    ///
    /// As ``values`` in all else (buffering, the end, task cancellation).
    public var results: Results {
        Results(stream: self, policy: .bufferingNewest(capacity))
    }

    /// An `AsyncSequence` of the values of a ``FutureStream``; see ``FutureStream/values``.
    ///
    /// ```swift
    /// let sum = try await promise.stream.values.reduce(0, +)
    /// ```
    public struct Values: AsyncSequence, Sendable {
        /// A value of the stream.
        public typealias Element = Value
        /// Any error of the stream.
        public typealias Failure = any Error

        @usableFromInline let stream: FutureStream<Value>
        @usableFromInline let policy: BufferingPolicy

        @usableFromInline
        init(stream: FutureStream<Value>, policy: BufferingPolicy) {
            self.stream = stream
            self.policy = policy
        }

        /// Subscribes to the stream; see ``FutureStream/values`` for what the iterator gets.
        ///
        /// ```swift
        /// var iterator = stream.values.makeAsyncIterator()
        /// let first = try await iterator.next()
        /// ```
        ///
        /// - Returns: An iterator that is subscribed to the stream until it is dropped.
        @inlinable
        public func makeAsyncIterator() -> Iterator {
            Iterator(core: StreamIteratorCore(stream: stream, policy: policy))
        }

        /// Gets the values of one subscription, in order.
        ///
        /// ```swift
        /// var iterator = stream.values.makeAsyncIterator()
        /// while let value = try await iterator.next() { print(value) }
        /// ```
        public struct Iterator: AsyncIteratorProtocol {
            @usableFromInline let core: StreamIteratorCore<Value>

            @usableFromInline
            init(core: StreamIteratorCore<Value>) {
                self.core = core
            }

            /// The next value; nil once the stream has finished or the task was cancelled.
            ///
            /// ```swift
            /// var iterator = stream.values.makeAsyncIterator()
            /// let value = try await iterator.next()
            /// ```
            ///
            /// - Returns: The next value, or nil at the end.
            /// - Throws: The stream's next error (after which the iteration is over).
            @inlinable
            public mutating func next() async throws -> Value? {
                switch await core.next() {
                case .success(let value)?:
                    return value
                case .failure(let error)?:
                    core.stop()
                    throw error
                case nil:
                    return nil
                }
            }
        }
    }

    /// An `AsyncSequence` of the results of a ``FutureStream``; see ``FutureStream/results``.
    ///
    /// ```swift
    /// let failures = await stream.results.reduce(0) { count, result in count + ((try? result.get()) == nil ? 1 : 0) }
    /// ```
    public struct Results: AsyncSequence, Sendable {
        /// A result of the stream.
        public typealias Element = Result<Value, any Error>
        /// Never: errors are elements.
        public typealias Failure = Never

        @usableFromInline let stream: FutureStream<Value>
        @usableFromInline let policy: BufferingPolicy

        @usableFromInline
        init(stream: FutureStream<Value>, policy: BufferingPolicy) {
            self.stream = stream
            self.policy = policy
        }

        /// Subscribes to the stream; see ``FutureStream/results`` for what the iterator gets.
        ///
        /// ```swift
        /// var iterator = stream.results.makeAsyncIterator()
        /// let first = await iterator.next()
        /// ```
        ///
        /// - Returns: An iterator that is subscribed to the stream until it is dropped.
        @inlinable
        public func makeAsyncIterator() -> Iterator {
            Iterator(core: StreamIteratorCore(stream: stream, policy: policy))
        }

        /// Gets the results of one subscription, in order.
        ///
        /// ```swift
        /// var iterator = stream.results.makeAsyncIterator()
        /// while let result = await iterator.next() { print(result) }
        /// ```
        public struct Iterator: AsyncIteratorProtocol {
            @usableFromInline let core: StreamIteratorCore<Value>

            @usableFromInline
            init(core: StreamIteratorCore<Value>) {
                self.core = core
            }

            /// The next result; nil once the stream has finished or the task was cancelled.
            ///
            /// ```swift
            /// var iterator = stream.results.makeAsyncIterator()
            /// let result = await iterator.next()
            /// ```
            ///
            /// - Returns: The next result, or nil at the end.
            @inlinable
            public mutating func next() async -> Result<Value, any Error>? {
                await core.next()
            }
        }
    }
}

@available(*, unavailable)
extension FutureStream.Values.Iterator: Sendable {}

@available(*, unavailable)
extension FutureStream.Results.Iterator: Sendable {}

// MARK: - AsyncSequence to stream

extension FutureStream {
    /// Creates a stream of the elements of `sequence`, iterated in a new task.
    ///
    /// Each element becomes a value; an error thrown by the sequence becomes the last result; the
    /// end of the sequence finishes the stream. The task runs on FutureLib's own threads, not on
    /// Swift's cooperative pool, and keeps the stream alive until it is done.
    ///
    /// ```swift
    /// let stop = CancellationRequest()
    /// let lines = FutureStream(capacity: 100, cancellationToken: stop.token, file.bytes.lines)
    /// lines.onSuccess { print($0) }
    /// stop.cancel()  // cancels the task; the stream gets `CancellationError` and finishes
    /// ```
    ///
    /// ### Cancellation
    /// Cancelling `cancellationToken` cancels the task (before `cancel()` returns), and the stream
    /// gets `CancellationError` and finishes at once, without waiting for the sequence to notice.
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the stream keeps for late subscribers.
    ///   - cancellationToken: Stops the iteration and finishes the stream.
    ///   - sequence: The elements.
    public convenience init<Elements: AsyncSequence & Sendable>(
        capacity: Int,
        cancellationToken: CancellationToken = .none,
        _ sequence: Elements
    ) where Elements.Element == Value {
        self.init(capacity: capacity)
        if failIfCancelled(cancellationToken) { return }
        cancelOnRequest(of: cancellationToken)
        Task(executorPreference: WorkerPool.shared) { [self] in
            do {
                try await withCancellation(cancellationToken) {
                    for try await element in sequence {
                        guard publish(.success(element)) else { break }  // finished: cancelled
                    }
                }
            } catch {
                if !cancellationToken.isCancellationRequested { publish(.failure(error)) }
            }
            // A cancelled token's handler (`cancelOnRequest`) ends the stream with
            // `CancellationError`; handlers run newest first, so this task can get here before it.
            if !cancellationToken.isCancellationRequested { finish() }
        }
    }
}
