public import Cancellation

/// A `CancellationRequest`, weakly: whether something still keeps it alive (`request` is nil once every holder let
/// go of it).
public final class WeakCancellationRequest: Sendable {
    /// The request, while something else keeps it.
    public weak let request: CancellationRequest?

    /// Watches `request` without keeping it.
    public init(_ request: CancellationRequest) {
        self.request = request
    }
}
