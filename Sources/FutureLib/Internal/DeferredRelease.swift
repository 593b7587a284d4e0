/// Releases a chain of objects iteratively: a `deinit` that would release the next link of a
/// chain (a pending future's continuations, which hold the futures derived from it; a stream
/// stage's subscription to its source) hands that link here instead of dropping it.
///
/// The outermost release on a thread drops each link it is handed in turn, and every `deinit`
/// that this runs hands its own link back to the same queue instead of nesting: releasing a
/// chain of a million `map`s on a future that never completed uses a bounded amount of stack,
/// as completing one does (``Trampoline``).
@usableFromInline
enum DeferredRelease: Sendable {
    /// Releases `link` now, or, inside another such release on this thread, right after it.
    ///
    /// Out of line and never on a hot path: only a future released with continuations still
    /// waiting, or a stream stage released while subscribed, comes here.
    @usableFromInline @inline(never)
    static func release(_ link: consuming Any) {
        let thread = PerThread.current
        thread.released.append(link)
        guard !thread.isReleasing else { return }
        thread.isReleasing = true
        // Each link leaves the queue (and is dropped) before the next one is taken: what its
        // `deinit`s hand back lands behind it.
        while let next = thread.released.popFirst() { _ = consume next }
        thread.isReleasing = false
    }
}
