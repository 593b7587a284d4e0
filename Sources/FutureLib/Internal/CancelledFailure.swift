/// The error a future fails with when its token fires: `CancellationError()`, boxed once.
///
/// An `any Error` of a struct is a heap box; a new `CancellationError()` per cancelled future,
/// continuation or combinator would allocate one each time a token fires. Every path that fails
/// with a cancellation shares this one (an error value has no identity a caller can observe), so a
/// cancelled chain allocates nothing for its errors (guarded by AllocationCheck
/// `cancel-chain-with-token`).
@usableFromInline
let cancelledFailure: any Error = CancellationError()
