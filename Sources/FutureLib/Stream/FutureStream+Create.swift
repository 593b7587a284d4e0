import FutureLibConcurrencyHelpers

// Streams that hold a result from the start, or get it from work on a context: SimpleFutures'
// `FutureStream(value:capacity:)`, `FutureStream(error:capacity:)` and `futureStream(context:) { … }`.
//
// Nobody else can write to these streams, so each one finishes after its result: a subscriber gets
// the result, then the end.

extension FutureStream {
    /// Creates a stream that holds `value` and has finished.
    ///
    /// The stream equivalent of `Future(value:)`: for tests, and for a `flatMap` or `recoverWith`
    /// branch whose answer is a single value.
    ///
    /// ```swift
    /// let cached = FutureStream(value: 21.5)
    /// #expect(cached.count == 1)
    /// #expect(cached.isFinished)
    /// ```
    ///
    /// - Parameters:
    ///   - value: The stream's one value; every subscriber gets it, then the end.
    ///   - capacity: How many of the latest results the stream keeps (combinators give their streams
    ///     the same capacity). Defaults to 1; with 0 the value is not kept and nobody sees it.
    public convenience init(value: Value, capacity: Int = 1) {
        self.init(capacity: capacity)
        publish(.success(value))
        finish()
    }

    /// Creates a stream that holds `error` and has finished.
    ///
    /// ```swift
    /// let offline = FutureStream<Double>(error: SensorError.unavailable)
    /// offline.onFailure { error in print("no readings: \(error)") }
    /// ```
    ///
    /// - Parameters:
    ///   - error: The stream's one result; every subscriber gets it, then the end.
    ///   - capacity: How many of the latest results the stream keeps. Defaults to 1; with 0 the
    ///     error is not kept and nobody sees it.
    public convenience init(error: any Error, capacity: Int = 1) {
        self.init(capacity: capacity)
        publish(.failure(error))
        finish()
    }

    /// Creates a stream whose one result comes from running `work` on `context`.
    ///
    /// The stream gets `work`'s value, or the error it throws, and finishes. Subscribers added before or after that see the result, as
    /// long as `capacity` keeps it.
    ///
    /// ```swift
    /// let calibration = FutureStream(on: DispatchQueue.global()) { try Calibration.load() }
    /// calibration.onSuccess(on: .synchronous) { print("offset \($0.offset)") }
    /// ```
    ///
    /// ### Cancellation
    /// When `cancellationToken` is cancelled before `work` has returned, the stream gets
    /// `CancellationError` and finishes at once; `work` is not started if it had not started yet,
    /// and its result is ignored if it had. A token that is already cancelled gives a stream that
    /// holds just that error and has finished.
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the stream keeps. Defaults to 1.
    ///   - context: Where `work` runs. Defaults to ``ExecutionContext/default``.
    ///   - cancellationToken: Cancels and finishes the stream, and skips `work` if it has not started.
    ///   - work: Produces the stream's result.
    public convenience init(
        capacity: Int = 1,
        on context: some ExecutionContext = .default,
        cancellationToken: CancellationToken = .none,
        _ work: @escaping @Sendable () throws -> Value
    ) {
        self.init(capacity: capacity)
        if failIfCancelled(cancellationToken) { return }
        cancelOnRequest(of: cancellationToken)
        context.execute { [self] in
            guard !cancellationToken.isCancellationRequested else { return }
            publish(Result { try work() })
            finish()
        }
    }

    /// How many results the stream keeps now, for subscribers that come later.
    ///
    /// At most ``capacity``. It grows with each result until `capacity` is
    /// reached, and stays there (the oldest result is dropped for each new one).
    ///
    /// ```swift
    /// let progress = StreamPromise<Int>(capacity: 2)
    /// progress.fulfill(10)
    /// #expect(progress.stream.count == 1)
    /// progress.fulfill(20)
    /// progress.fulfill(30)
    /// #expect(progress.stream.count == 2)  // 20 and 30
    /// ```
    public var count: Int {
        state.withLock { $0.recent.storage.count }
    }
}
