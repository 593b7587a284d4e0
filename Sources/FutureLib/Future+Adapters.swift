// Wrapping completion-handler APIs into futures (SimpleFutures' `future(method:)`).
//
// Each shape of callback has two forms: `method` takes just the completion (so an existing
// function can be passed by name), or the completion and a token that is cancelled when the
// caller's token is, for APIs that can stop early (`URLSessionTask.cancel()`). That token's
// handlers are released as soon as the future completes.

extension Future {
    /// Wraps an API that calls back with an optional value and an optional error.
    ///
    /// ```swift
    /// func fetchCount(_ completion: @escaping @Sendable (Int?, (any Error)?) -> Void) { completion(42, nil) }
    /// let count = Future(method: fetchCount)
    /// ```
    ///
    /// An error fails the future; otherwise a value fulfils it; neither fails it with
    /// ``FutureError/noSuchElement``. Only the first call of `completion` counts.
    ///
    /// ### Optional values
    /// For a `Future<T?>` wrapping a `(T?, Error?)` callback, a `nil` value is no value: it fails
    /// with ``FutureError/noSuchElement``. To keep `nil` as a value, use the `Result` form:
    ///
    /// ```swift
    /// func lookUp(_ completion: @escaping @Sendable (Int?, (any Error)?) -> Void) { completion(nil, nil) }
    /// let port = Future<Int?> { completion in
    ///     lookUp { value, error in completion(error.map { .failure($0) } ?? .success(value)) }
    /// }  // fulfilled with nil
    /// ```
    ///
    /// - Parameters:
    ///   - cancellationToken: Fails the future with `CancellationError` when cancelled first.
    ///   - method: Starts the operation and arranges for `completion` to be called.
    public convenience init(
        cancellationToken: CancellationToken = .none,
        method: (_ completion: @escaping @Sendable (Value?, (any Error)?) -> Void) -> Void
    ) {
        self.init(cancellationToken: cancellationToken) { completion, _ in method(completion) }
    }

    /// Wraps a cancellable API that calls back with an optional value and an optional error.
    ///
    /// ```swift
    /// let data = Future<Data>(cancellationToken: request.token) { completion, token in
    ///     let task = session.dataTask(with: url) { data, _, error in completion(data, error) }
    ///     token.onCancel { task.cancel() }
    ///     task.resume()
    /// }
    /// ```
    ///
    /// ### Cancellation
    /// When `cancellationToken` is cancelled first, the future fails with `CancellationError` at
    /// once and the token given to `method` is cancelled, running what `method` registered on it.
    /// When the future completes first, those handlers are released without running.
    ///
    /// - Parameters:
    ///   - cancellationToken: Fails the future with `CancellationError` when cancelled first.
    ///   - method: Starts the operation, arranges for `completion` to be called, and may register
    ///     on the token it is given to stop the operation early.
    public convenience init(
        cancellationToken: CancellationToken = .none,
        method: (
            _ completion: @escaping @Sendable (Value?, (any Error)?) -> Void, _ cancellationToken: CancellationToken
        ) -> Void
    ) {
        self.init()
        startAdapted(cancellationToken) { [self] token in
            method(
                { [self] value, error in
                    if let error {
                        complete(with: .failure(error))
                    } else if let value {
                        complete(with: .success(value))
                    } else {
                        complete(with: .failure(FutureError.noSuchElement))
                    }
                },
                token
            )
        }
    }

    /// Wraps an API that calls back with a `Result`.
    ///
    /// ```swift
    /// let user = Future<User> { completion in client.loadUser(id: 7, completion: completion) }
    /// ```
    ///
    /// - Parameters:
    ///   - cancellationToken: Fails the future with `CancellationError` when cancelled first.
    ///   - method: Starts the operation and arranges for `completion` to be called.
    public convenience init(
        cancellationToken: CancellationToken = .none,
        method: (_ completion: @escaping @Sendable (Result<Value, any Error>) -> Void) -> Void
    ) {
        self.init(cancellationToken: cancellationToken) { completion, _ in method(completion) }
    }

    /// Wraps a cancellable API that calls back with a `Result`.
    ///
    /// ```swift
    /// let user = Future<User>(cancellationToken: token) { completion, token in
    ///     let call = client.loadUser(id: 7, completion: completion)
    ///     token.onCancel { call.cancel() }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - cancellationToken: Fails the future with `CancellationError` when cancelled first.
    ///   - method: Starts the operation, arranges for `completion` to be called, and may register
    ///     on the token it is given to stop the operation early.
    public convenience init(
        cancellationToken: CancellationToken = .none,
        method: (
            _ completion: @escaping @Sendable (Result<Value, any Error>) -> Void, _ cancellationToken: CancellationToken
        ) -> Void
    ) {
        self.init(
            cancellationToken: cancellationToken,
            adapting: { complete, token in
                method({ _ = complete($0) }, token)
            }
        )
    }

    /// Wraps an API that calls back with a value and cannot fail.
    ///
    /// ```swift
    /// let location = Future<Coordinate> { completion in locator.requestOnce(completion) }
    /// ```
    ///
    /// ### Overload ranking
    /// Disfavored, so that a function passed by name whose completion takes a `Result` or an
    /// optional error picks the `Result` or `Void` form and its value type is inferred, with no
    /// explicit `Future<T>`: such a completion is also a "value" completion (of a `Result`, or of an
    /// `Error?`), and without the ranking the call was ambiguous. A completion that takes a plain
    /// value matches only this form and still picks it.
    ///
    /// ```swift
    /// func loadCount(_ completion: @escaping @Sendable (Result<Int, any Error>) -> Void) { completion(.success(3)) }
    /// func save(_ completion: @escaping @Sendable ((any Error)?) -> Void) { completion(nil) }
    /// func locate(_ completion: @escaping @Sendable (Double) -> Void) { completion(1.5) }
    /// let count = Future(method: loadCount)   // Future<Int>
    /// let saved = Future(method: save)        // Future<Void>
    /// let spot = Future(method: locate)       // Future<Double>
    /// ```
    ///
    /// - Parameters:
    ///   - cancellationToken: Fails the future with `CancellationError` when cancelled first.
    ///   - method: Starts the operation and arranges for `completion` to be called.
    @_disfavoredOverload
    public convenience init(
        cancellationToken: CancellationToken = .none,
        method: (_ completion: @escaping @Sendable (Value) -> Void) -> Void
    ) {
        self.init(
            cancellationToken: cancellationToken,
            adapting: { complete, _ in
                method { _ = complete(.success($0)) }
            }
        )
    }

    /// Runs `start` with a token that the caller's token cancels and that is dropped (releasing
    /// its handlers) when this future completes.
}

extension Future where Value == Void {
    /// Wraps an API that calls back with an optional error only.
    ///
    /// ```swift
    /// let saved = Future<Void> { completion in store.save(record, completion: completion) }
    /// ```
    ///
    /// - Parameters:
    ///   - cancellationToken: Fails the future with `CancellationError` when cancelled first.
    ///   - method: Starts the operation and arranges for `completion` to be called.
    public convenience init(
        cancellationToken: CancellationToken = .none,
        method: (_ completion: @escaping @Sendable ((any Error)?) -> Void) -> Void
    ) {
        self.init(cancellationToken: cancellationToken) {
            (completion: @escaping @Sendable (Result<Void, any Error>) -> Void) in
            method { error in completion(error.map { .failure($0) } ?? .success(())) }
        }
    }
}

extension Future {
    /// The callback adapter behind the `method:` initializers and `FutureLibFoundation`'s
    /// `URLSession` futures (see `EndedByToken.startAdapted`): `start` gets a function that
    /// completes the future (true if that call completed it, false if it had ended already, for
    /// example by its token) and the token to hand to the work.
    package convenience init(
        cancellationToken: CancellationToken,
        adapting start: (
            _ complete: @escaping @Sendable (Result<Value, any Error>) -> Bool, _ cancellationToken: CancellationToken
        ) -> Void
    ) {
        self.init()
        startAdapted(cancellationToken) { [self] token in
            start({ [self] in complete(with: $0) }, token)
        }
    }
}
