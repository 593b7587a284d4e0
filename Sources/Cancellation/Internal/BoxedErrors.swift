/// The errors a request is cancelled with by the library itself, each boxed once.
///
/// An `any Error` of a struct is a heap box: a new `DeadlineExceededError()` per expired deadline,
/// or a new `CancellationError()` per read of a reason-less request's ``CancellationToken/reason``,
/// would allocate each time. An error value has no identity a caller can observe, so they share
/// these.
enum BoxedErrors {
    /// The reason of every deadline's cancellation.
    static let deadlineExceeded: any Error = DeadlineExceededError()
    /// The reason of a request cancelled without one.
    static let cancellation: any Error = CancellationError()
}
