import Synchronization

/// The write side of a ``FutureStream``: adds results to it and finishes it.
///
/// Keep the promise where the results come from (a delegate, a callback, a loop) and hand out
/// ``stream``. Every method may be called from any thread. The methods are named as on
/// ``Promise``: ``fulfill(_:)``, ``reject(_:)``, ``resolve(_:)``, `resolve(with:cancellationToken:)` (for a future or a stream).
///
/// ```swift
/// final class Accelerometer: Sendable {
///     private let updates = StreamPromise<Acceleration>(capacity: 10)
///     var accelerations: FutureStream<Acceleration> { updates.stream }
///
///     func didUpdate(_ data: Acceleration?, error: (any Error)?) {
///         if let error { updates.reject(error) } else if let data { updates.fulfill(data) }
///     }
///     func stop() { updates.finish() }
/// }
/// ```
///
/// ### Semantics
/// - Results are recorded in the order the calls reach the stream (concurrent calls are
///   serialized by its lock); each subscriber sees them in that order, exactly once.
/// - ``finish()`` ends the stream; results written after it are ignored. Dropping the promise
///   without calling it finishes the stream too, so no subscriber or `for await` loop waits
///   forever on a promise that is gone.
public final class StreamPromise<Value: Sendable>: Sendable {
    /// The read side, to hand out to subscribers.
    ///
    /// ```swift
    /// let promise = StreamPromise<Int>(capacity: 5)
    /// promise.stream.onSuccess { print($0) }
    /// ```
    public let stream: FutureStream<Value>

    /// Creates a promise whose stream keeps its last `capacity` results for later subscribers.
    ///
    /// ```swift
    /// let locations = StreamPromise<Location>(capacity: 1)    // late subscribers get the latest
    /// let log = StreamPromise<String>(capacity: .max)         // keeps everything (unbounded)
    /// ```
    ///
    /// - Parameter capacity: How many of the latest results to keep, at least 0. `Int.max` keeps
    ///   all of them.
    public init(capacity: Int) {
        precondition(capacity >= 0, "capacity must not be negative")
        stream = FutureStream(capacity: capacity)
    }

    /// Creates a promise whose stream keeps every result.
    ///
    /// The same as `StreamPromise(capacity: .max)`: a late subscriber gets everything, and the
    /// stream grows without bound until it is released. Choose a capacity for a long-lived stream.
    ///
    /// ```swift
    /// let log = StreamPromise<String>()
    /// log.fulfill("started")
    /// log.fulfill("connected")
    /// #expect(log.stream.count == 2)
    /// ```
    public convenience init() {
        self.init(capacity: .max)
    }

    deinit {
        // Unspecialized, as every generic class's `deinit`: the flag spares a promise that was
        // finished the generic `finish()` (see ``FutureStream/hasFinished``).
        if !stream.hasFinished.load(ordering: .acquiring) { stream.finish() }
    }

    /// Adds a value to the stream.
    ///
    /// ```swift
    /// promise.fulfill(reading)
    /// ```
    ///
    /// - Parameter value: The value; ignored if the stream has finished.
    @inlinable
    public func fulfill(_ value: Value) {
        stream.publish(.success(value))
    }

    /// Adds an error to the stream; the stream goes on (an error is a result, not the end).
    ///
    /// ```swift
    /// promise.reject(SensorError.unavailable)
    /// ```
    ///
    /// - Parameter error: The error; ignored if the stream has finished.
    @inlinable
    public func reject(_ error: any Error) {
        stream.publish(.failure(error))
    }

    /// Adds a result to the stream.
    ///
    /// ```swift
    /// promise.resolve(Result { try parse(line) })
    /// ```
    ///
    /// - Parameter result: The result; ignored if the stream has finished.
    @inlinable
    public func resolve(_ result: Result<Value, any Error>) {
        stream.publish(result)
    }

    /// Ends the stream: each subscriber gets the results still on their way to it, then the end.
    ///
    /// ```swift
    /// promise.fulfill(100)
    /// promise.finish()
    /// #expect(promise.stream.isFinished)
    /// ```
    ///
    /// Calling it again does nothing.
    @inlinable
    public func finish() {
        stream.finish()
    }

    /// Adds the result of `future` to the stream when it completes.
    ///
    /// ```swift
    /// promise.resolve(with: fetchLatestReading())
    /// ```
    ///
    /// The promise is kept alive until the future completes.
    ///
    /// - Parameters:
    ///   - future: The future whose result to add.
    ///   - cancellationToken: When cancelled first, the result is not added (nothing is).
    public func resolve(with future: Future<Value>, cancellationToken: CancellationToken = .none) {
        future.observe(
            on: .synchronous,
            cancellationToken: cancellationToken,
            .result { [self] result in
                if case .failure(let error) = result, error is CancellationError,
                    cancellationToken.isCancellationRequested
                {
                    return
                }
                stream.publish(result)
            }
        )
    }

    /// Adds every result of `other` to the stream, in order, as it arrives.
    ///
    /// Several streams can feed one promise (a merge). The end of `other` does not finish this
    /// stream; call ``finish()`` for that. `other`'s kept results are forwarded first, as to any
    /// late subscriber. The promise is kept alive while the forwarding lasts.
    ///
    /// ```swift
    /// let all = StreamPromise<Reading>(capacity: 10)
    /// all.resolve(with: indoorSensor)
    /// all.resolve(with: outdoorSensor)
    /// ```
    ///
    /// - Parameters:
    ///   - other: The stream whose results to add.
    ///   - cancellationToken: Stops the forwarding when cancelled.
    public func resolve(with other: FutureStream<Value>, cancellationToken: CancellationToken = .none) {
        other.subscribe(on: .synchronous, cancellationToken: cancellationToken, feedsStream: true) { [self] event in
            if case .result(let result) = event { stream.publish(result) }
        }
    }
}
