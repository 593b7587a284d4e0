/// Where a continuation runs, stored compactly: `.synchronous` needs no existential.
///
/// Most continuations are combinators' on `.synchronous`. Storing `any ExecutionContext` for them
/// made every copy and destruction of a ``Continuation`` go through the existential's value
/// witnesses; a case without payload is copied as plain bits.
@usableFromInline
enum ContinuationTarget: Sendable {
    case synchronous
    case other(any ExecutionContext)

    @inlinable
    init(_ context: any ExecutionContext) {
        self = context.isSynchronous ? .synchronous : .other(context)
    }

    @inlinable
    var isSynchronous: Bool {
        if case .synchronous = self { return true }
        return false
    }
}
