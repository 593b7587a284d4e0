// Wrapping APIs that call a callback many times into streams (SimpleFutures' `futureStream(method:)`),
// in the style of `Future(method:)`.
//
// Each call of the callback adds one result. Such APIs have no "last call", so the stream goes on
// until the caller's token is cancelled (it then gets `CancellationError` and finishes). The
// forms whose `method` also takes a token hand it a token that is cancelled with the caller's,
// to stop the underlying updates (`stopUpdatingLocation()`, `invalidate()`); its handlers are
// released when the stream finishes.

extension FutureStream {
    /// Creates a stream fed by a callback that gets an optional value and an optional error.
    ///
    /// Each call adds the error if there is one, else the value; a call with neither adds
    /// ``FutureError/noSuchElement``, even for a `FutureStream<T?>` (a `nil` value is no value
    /// here); the `Result` form keeps `nil` as a value.
    ///
    /// ```swift
    /// extension Compass {
    ///     func headings() -> FutureStream<Double> {
    ///         FutureStream(capacity: 1, method: startUpdates(handler:))
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the stream keeps for late subscribers.
    ///   - cancellationToken: Finishes the stream (after a `CancellationError`) when cancelled.
    ///   - method: Starts the updates; it is called once, at once, with the callback.
    public convenience init(
        capacity: Int,
        cancellationToken: CancellationToken = .none,
        method: (_ callback: @escaping @Sendable (Value?, (any Error)?) -> Void) -> Void
    ) {
        self.init(capacity: capacity, cancellationToken: cancellationToken) { callback, _ in method(callback) }
    }

    /// Creates a stream fed by a callback that gets an optional value and an optional error, from
    /// a `method` that can be stopped through a token.
    ///
    /// ```swift
    /// let stop = CancellationRequest()
    /// let locations = FutureStream<Location>(capacity: 1, cancellationToken: stop.token) { callback, token in
    ///     manager.startUpdates(callback)
    ///     token.onCancel { manager.stopUpdates() }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the stream keeps for late subscribers.
    ///   - cancellationToken: Finishes the stream (after a `CancellationError`) and cancels the
    ///     token given to `method` when cancelled.
    ///   - method: Starts the updates; it is called once, at once, with the callback and a token.
    public convenience init(
        capacity: Int,
        cancellationToken: CancellationToken = .none,
        method: (
            _ callback: @escaping @Sendable (Value?, (any Error)?) -> Void, _ cancellationToken: CancellationToken
        ) -> Void
    ) {
        self.init(capacity: capacity)
        startAdapted(cancellationToken) { [self] token in
            method(
                { [self] value, error in
                    if let error {
                        publish(.failure(error))
                    } else if let value {
                        publish(.success(value))
                    } else {
                        publish(.failure(FutureError.noSuchElement))
                    }
                },
                token
            )
        }
    }

    /// Creates a stream fed by a callback that gets a `Result`.
    ///
    /// ```swift
    /// let messages = FutureStream<String>(capacity: 10, method: socket.receiveMessages(handler:))
    /// ```
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the stream keeps for late subscribers.
    ///   - cancellationToken: Finishes the stream (after a `CancellationError`) when cancelled.
    ///   - method: Starts the updates; it is called once, at once, with the callback.
    public convenience init(
        capacity: Int,
        cancellationToken: CancellationToken = .none,
        method: (_ callback: @escaping @Sendable (Result<Value, any Error>) -> Void) -> Void
    ) {
        self.init(capacity: capacity, cancellationToken: cancellationToken) { callback, _ in method(callback) }
    }

    /// Creates a stream fed by a callback that gets a `Result`, from a `method` that can be
    /// stopped through a token.
    ///
    /// ```swift
    /// let ticks = FutureStream<Int>(capacity: 1, cancellationToken: stop.token) { callback, token in
    ///     metronome.start { tick in callback(.success(tick)) }
    ///     token.onCancel { metronome.stop() }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the stream keeps for late subscribers.
    ///   - cancellationToken: Finishes the stream (after a `CancellationError`) and cancels the
    ///     token given to `method` when cancelled.
    ///   - method: Starts the updates; it is called once, at once, with the callback and a token.
    public convenience init(
        capacity: Int,
        cancellationToken: CancellationToken = .none,
        method: (
            _ callback: @escaping @Sendable (Result<Value, any Error>) -> Void, _ cancellationToken: CancellationToken
        ) -> Void
    ) {
        self.init(capacity: capacity)
        startAdapted(cancellationToken) { [self] token in
            method({ [self] in publish($0) }, token)
        }
    }

    /// Creates a stream fed by a callback that gets a value (an API that cannot fail).
    ///
    /// ```swift
    /// let batteryLevels = FutureStream(capacity: 1, method: battery.observeLevel(handler:))
    /// ```
    ///
    /// ### Overload ranking
    /// Disfavored, as `Future(method:)`'s value-only form is: a function passed by name whose
    /// callback takes a `Result` or an optional error picks the `Result` or `Void` form and its
    /// value type is inferred, with no explicit `FutureStream<T>` (such a callback is also a
    /// "value" callback, and without the ranking the call was ambiguous). A callback that takes a
    /// plain value matches only this form and still picks it.
    ///
    /// ```swift
    /// func observeTotals(_ callback: @escaping @Sendable (Result<Int, any Error>) -> Void) { callback(.success(3)) }
    /// func observeSaves(_ callback: @escaping @Sendable ((any Error)?) -> Void) { callback(nil) }
    /// func observeLevel(_ callback: @escaping @Sendable (Double) -> Void) { callback(0.5) }
    /// let totals = FutureStream(capacity: 1, method: observeTotals)  // FutureStream<Int>
    /// let saves = FutureStream(capacity: 1, method: observeSaves)    // FutureStream<Void>
    /// let levels = FutureStream(capacity: 1, method: observeLevel)   // FutureStream<Double>
    /// ```
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the stream keeps for late subscribers.
    ///   - cancellationToken: Finishes the stream (after a `CancellationError`) when cancelled.
    ///   - method: Starts the updates; it is called once, at once, with the callback.
    @_disfavoredOverload
    public convenience init(
        capacity: Int,
        cancellationToken: CancellationToken = .none,
        method: (_ callback: @escaping @Sendable (Value) -> Void) -> Void
    ) {
        self.init(capacity: capacity)
        startAdapted(cancellationToken) { [self] _ in
            method { [self] in publish(.success($0)) }
        }
    }

    /// Calls `start` with the token to give the wrapped API, unless `cancellationToken` is
    /// cancelled already.
}

extension FutureStream where Value == Void {
    /// Creates a stream fed by a callback that gets an optional error: each call adds a success
    /// (`nil`) or the error.
    ///
    /// ```swift
    /// let saves: FutureStream<Void> = FutureStream(capacity: 1, method: document.observeAutosaves(handler:))
    /// ```
    ///
    /// - Parameters:
    ///   - capacity: How many of the latest results the stream keeps for late subscribers.
    ///   - cancellationToken: Finishes the stream (after a `CancellationError`) when cancelled.
    ///   - method: Starts the updates; it is called once, at once, with the callback.
    public convenience init(
        capacity: Int,
        cancellationToken: CancellationToken = .none,
        method: (_ callback: @escaping @Sendable ((any Error)?) -> Void) -> Void
    ) {
        self.init(capacity: capacity, cancellationToken: cancellationToken) {
            (callback: @escaping @Sendable (Result<Void, any Error>) -> Void) in
            method { error in callback(error.map { .failure($0) } ?? .success(())) }
        }
    }
}
