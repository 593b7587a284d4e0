import FutureLibReferenceCount

extension CancellationRequest {
    /// Whether the request can serve unrelated work as a new one would: nothing but the caller's
    /// reference holds it, no token or registration of it exists, it is not cancelled, and it has
    /// no timer and no links.
    ///
    /// ```swift
    /// /// Makes a request per unit of work, keeping the last one for the next unit.
    /// struct Requests {
    ///     private var spare: CancellationRequest?
    ///
    ///     mutating func next() -> CancellationRequest {
    ///         if let reused = spare.take(), reused.isReusable { return reused }
    ///         return CancellationRequest()
    ///     }
    ///
    ///     mutating func finished(_ request: CancellationRequest) {
    ///         spare = request
    ///     }
    /// }
    /// ```
    ///
    /// For a server that makes a request per unit of work, most of which end with nobody having
    /// kept the token: keeping the request for the next unit spares an allocation and a release.
    ///
    /// ### Semantics
    /// - `true` only while the reference the caller reads it through is the request's one strong
    ///   reference, and the request's tokens and registrations are all gone: then nothing can
    ///   observe the request, and nothing can until the caller hands out its token again. A weak or
    ///   unowned reference to the request, kept elsewhere, could load it again: keep none.
    /// - It reads the reference counts as they are: a reference the compiler keeps for the call
    ///   counts (so a request read through another object's property can get `false` in a debug
    ///   build; one taken out into a local constant, as above, gets `true` in any build), and a
    ///   second reference that the caller's own function holds in a local may count as none in an
    ///   optimized build, where the compiler can borrow it instead of retaining it. The references
    ///   it guards against are those kept elsewhere: in objects, closures, collections, tasks.
    /// - A reused request is the same object: its tokens compare equal to the tokens handed out
    ///   before. Nothing can compare them, since none of those is left. Its handler list keeps its
    ///   capacity.
    public var isReusable: Bool {
        futurelib_is_only_strong_reference(Unmanaged.passUnretained(self).toOpaque())
            && futurelib_is_only_strong_reference(Unmanaged.passUnretained(core).toOpaque())
            && core.isPristine
    }
}
