// The empty stream and the stream that never ends.

extension FutureStream {
    /// A stream with no result that has finished: a subscriber gets the end at once.
    ///
    /// ```swift
    /// let nothing: FutureStream<Int> = .empty
    /// #expect(nothing.isFinished)
    /// ```
    ///
    /// ```
    /// output:  |
    /// ```
    public static var empty: FutureStream<Value> {
        let empty = FutureStream(capacity: 0)
        empty.finish()
        return empty
    }

    /// A stream with no result that never finishes.
    ///
    /// ```swift
    /// let stop = CancellationRequest()
    /// FutureStream<Int>.never.onFinish(cancellationToken: stop.token) { print("never runs") }
    /// stop.cancel()  // the only way out: the subscriber's token
    /// ```
    ///
    /// ```
    /// output:  ------------>
    /// ```
    ///
    /// It lives while something holds it or subscribes to it, as a combinator's stream does, and
    /// finishes only when nothing can observe it any more; so a subscriber of it ends only with
    /// its token (or its `for await` loop with its task's cancellation). A subscriber without a
    /// token keeps it, and itself, alive for good.
    public static var never: FutureStream<Value> {
        FutureStream(capacity: 0, isStage: true)
    }
}
