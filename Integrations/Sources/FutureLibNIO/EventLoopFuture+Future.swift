public import FutureLib
public import NIOCore

// The two directions between SwiftNIO's `EventLoopFuture` and FutureLib's `Future`. NIO's futures cannot be
// cancelled, so a token here cancels the *waiting* (the FutureLib side), never the NIO operation itself.

extension Future {
    /// Creates a future completed with the result of `eventLoopFuture`, or with `CancellationError` when
    /// `cancellationToken` is cancelled first.
    ///
    /// ```swift
    /// let deadline = CancellationRequest(cancelAfter: .seconds(5))
    /// let connected = Future(bootstrap.connect(host: "127.0.0.1", port: 8080), cancellationToken: deadline.token)
    /// let channel = try await connected.value()
    /// ```
    ///
    /// ### Semantics
    /// - The future completes exactly once: with the `EventLoopFuture`'s result, or with `CancellationError`,
    ///   whichever comes first. The other one is ignored.
    /// - A result completes it on the `EventLoopFuture`'s loop thread; a cancellation completes it at once, on the
    ///   thread that cancels the token (or, for a token already cancelled, before this initializer returns).
    ///   Continuations run on the contexts they were given, as always.
    ///
    /// ### Cancellation
    /// The token does not cancel the NIO operation (an `EventLoopFuture` cannot be cancelled): close the channel,
    /// or cancel the `Scheduled` task, yourself if it must stop. The handler registered on the token is
    /// unregistered when the `EventLoopFuture` completes, so a long-lived token does not collect one per future.
    ///
    /// - Parameters:
    ///   - eventLoopFuture: The NIO future whose result to take.
    ///   - cancellationToken: Fails the future with `CancellationError` if cancelled first.
    public convenience init(_ eventLoopFuture: EventLoopFuture<Value>, cancellationToken: CancellationToken = .none) {
        // FutureLib's adapter gives the exactly-once arbitration and drops the token's handler on completion.
        self.init(cancellationToken: cancellationToken) {
            (completion: @escaping @Sendable (Result<Value, any Error>) -> Void) in
            eventLoopFuture.whenComplete(completion)
        }
    }

    /// Returns an `EventLoopFuture` on `eventLoop` completed with this future's result, or with
    /// `CancellationError` when `cancellationToken` is cancelled first.
    ///
    /// ```swift
    /// func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    ///     let reply: Future<String> = lookUp(unwrapInboundIn(data))
    ///     reply.eventLoopFuture(on: context.eventLoop).whenSuccess { text in
    ///         // on the channel's loop: the pipeline may be used here
    ///     }
    /// }
    /// ```
    ///
    /// ### Semantics
    /// - The `EventLoopFuture` completes exactly once, on `eventLoop`'s thread (its callbacks run there, as NIO
    ///   promises), with this future's result or with `CancellationError`, whichever comes first.
    /// - A token cancelled before this future completes fails the `EventLoopFuture` at once (hopping to the loop);
    ///   a token that is already cancelled wins even over a result that exists already. This future itself is not
    ///   completed by the cancellation.
    /// - NIO traps in debug builds when an `EventLoopPromise` is dropped uncompleted; this cannot happen here,
    ///   since a `Future` always completes (a dropped `Promise` fails it with `FutureError.brokenPromise`).
    ///
    /// - Parameters:
    ///   - eventLoop: The loop the returned future belongs to, and where its callbacks run.
    ///   - cancellationToken: Fails the `EventLoopFuture` with `CancellationError` if cancelled first.
    /// - Returns: An `EventLoopFuture` on `eventLoop`. It fails with `CancellationError` when the token was
    ///   cancelled first, or with this future's error.
    public func eventLoopFuture(
        on eventLoop: any EventLoop,
        cancellationToken: CancellationToken = .none
    ) -> EventLoopFuture<Value> {
        let promise = eventLoop.makePromise(of: Value.self)
        onComplete(on: .eventLoop(eventLoop), cancellationToken: cancellationToken) { promise.completeWith($0) }
        return promise.futureResult
    }
}

extension EventLoopFuture where Value: Sendable {
    /// This future as a FutureLib ``FutureLib/Future``, which the token can stop waiting for.
    ///
    /// ```swift
    /// let channel = try await bootstrap.connect(host: "127.0.0.1", port: 8080)
    ///     .future(cancellationToken: deadline.token)
    ///     .value()
    /// ```
    ///
    /// The same as `Future(self, cancellationToken:)`: see there for the thread and exactly-once semantics.
    ///
    /// - Parameter cancellationToken: Fails the returned future with `CancellationError` if cancelled first.
    /// - Returns: A future of this future's result. It fails with `CancellationError` when the token was cancelled
    ///   first.
    public func future(cancellationToken: CancellationToken = .none) -> Future<Value> {
        Future(self, cancellationToken: cancellationToken)
    }
}
