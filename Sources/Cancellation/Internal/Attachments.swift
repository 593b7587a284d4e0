import Synchronization

/// What only some requests have: a timer, links to sources. Allocated on first use, so that a
/// plain request's state and its cancellation carry one optional reference for both.
///
/// Read and written only with the request's lock held, until an action takes it out of the state;
/// then only the thread carrying out that action uses it.
///
/// It is also the request's first timer on the system clock (a ``SystemTimer``), so that a deadline
/// allocates nothing more than the attachments: ``CancellationState/armTimer(on:of:)`` hands it
/// out once, and ``timer`` then refers to the attachments themselves, a cycle that ``detach()``
/// breaks, as it breaks the one through the timer's closure.
///
/// And it is a linked request's handler on its sources (``link(to:index:)``), so that linking
/// allocates nothing more than the attachments either.
final class Attachments: SystemTimer, @unchecked Sendable {
    // Sendable: confined as said above; the lock hands it over (release/acquire) to that thread.
    // The exceptions: `core`, a weak constant, which the timer's thread and the sources' handlers
    // read; the timer's own fields, which only the system clock's lock guards; and the link's
    // fields (`firstSource`, `secondSource`, `liveSources`), whose rules are given with them.

    /// The request's core, weakly: the timer's closure and the sources' handlers hold these
    /// attachments, and a pending timer or a live source keeps the request cancellable while
    /// something can observe it, never alive.
    private weak let core: CancellationCore?

    /// The pending `cancel(after:)` timer, if any.
    var timer: (any ClockTimer)?
    /// The clock of `timer`, kept for the `cancel(after:)` calls that name none.
    var clock: (any TimerClock)?
    /// This request's handlers on its sources (`init(linkedTo:)`), if any.
    var links = SourceLinks()
    /// Whether a source still holds this request's link, and so can still cancel it.
    var isLinked = false
    /// Whether the `CancellationRequest` object is gone: only a pending timer or a source link
    /// (reaching the core weakly, while a token or registration keeps it) can cancel it now.
    var isRequestReleased = false
    /// Whether these attachments were handed out as a timer (``CancellationState/armTimer(on:of:)``).
    var hasStarted = false
    /// Whether the links are those of ``CancellationCore/link(toAll:)`` (cancelled once all sources
    /// are), which makes the links' deadline the latest of the sources', not the earliest.
    var isAllOf = false

    /// The link's first two sources. Each is written by the linking thread before the registration
    /// that stores the handler reading it (the source's lock orders the write before any call of
    /// that handler), then taken (set to nil) once, by whichever of two can no longer race: that
    /// handler when its source calls it, or ``detach()`` when it removed the handler before it
    /// started. Strong, so that the handler can ask its source whether it was cancelled even when
    /// it is called from the source's release, from work queued after the source's last owner let
    /// go; taken, so that these attachments keep no source once nothing can call the handler.
    private var firstSource: CancellationCore?
    private var secondSource: CancellationCore?
    /// How many sources hold the link's handler, plus one for the linking thread until it is done
    /// linking: the count that reaches zero tells the request that no source can cancel it any more.
    private let liveSources = Atomic<Int>(1)

    init(core: CancellationCore) {
        self.core = core
        super.init()
    }

    /// Whether a pending timer or a source can still cancel the request.
    var canCancel: Bool { timer != nil || isLinked }

    /// What the timer runs when it fires: cancels the request, if its core is still alive, with
    /// ``DeadlineExceededError`` as the reason.
    func fireDeadline() {
        core?.cancel(reason: BoxedErrors.deadlineExceeded)
    }

    /// Stops the timer and removes the links, outside the request's lock, once they were taken out
    /// of the state. Lets go of both: the timer's closure holds these attachments, and a clock
    /// that keeps a cancelled timer's closure must not keep the timer and the links with it.
    func detach() {
        timer?.cancel()
        let removed = links.unregisterAll()
        // A handler removed before it started is never called: its source is ours to let go of.
        if removed.first { firstSource = nil }
        if removed.second { secondSource = nil }
        timer = nil
        clock = nil
        links = SourceLinks()
    }

    // MARK: - The link

    /// Stores the link's handler on `source`, the link's source number `index`: called when the
    /// source is cancelled, it cancels the request with the source's reason (nil:
    /// `CancellationError()`); called when the source lets go of it unrun (the source can never be
    /// cancelled), it counts one source fewer (``sourceReleased()``).
    ///
    /// The first two sources are kept here, so that their handler captures these attachments alone,
    /// which then serve as the closure's context: linking to one or two sources allocates no closure
    /// context (guarded by AllocationCheck `linked-request`). Further sources get a handler that
    /// captures its source as well.
    func link(to source: CancellationCore, index: Int) -> CancellationRegistration {
        // Before the handler is stored: a release that calls it decrements after this.
        liveSources.add(1, ordering: .relaxed)
        switch index {
        case 0:
            firstSource = source
            return source.register(
                { [self] in sourceCalled(firstSource.take().unsafelyUnwrapped) },
                notifiesOnRelease: true
            )
        case 1:
            secondSource = source
            return source.register(
                { [self] in sourceCalled(secondSource.take().unsafelyUnwrapped) },
                notifiesOnRelease: true
            )
        default:
            return source.register({ [self, source] in sourceCalled(source) }, notifiesOnRelease: true)
        }
    }

    /// The link's handler on `source`. A source calls it once: when it is cancelled, or when it
    /// drops it unrun, which it does only once it can never be cancelled.
    private func sourceCalled(_ source: CancellationCore) {
        if source.isCancellationRequested {
            fire(reason: source.storedReason)
        } else {
            sourceReleased()
        }
    }

    /// Cancels the request, through the ``Trampoline``: a request linked to a request linked to…
    /// is cancelled in constant stack, each after the previous one's handlers returned. (A source
    /// that fired never reports a release: nothing can count the request's last source as gone
    /// while this cancellation is queued.)
    private func fire(reason: (any Error)?) {
        guard let core else { return }
        Trampoline.run(with: (core, reason)) { core, reason in core.cancel(reason: reason) }
    }

    /// One holder of the link let go of it without cancelling the request: a source, or the linking
    /// thread once it is done. The last tells the request that no source can cancel it any more.
    func sourceReleased() {
        // Acquiring and releasing: the last holder's report happens after every other one's.
        guard liveSources.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        core?.linkReleased()
    }
}

extension SourceLinks {
    /// The core of the source that link number `index` (below ``count``) is stored on; nil for an
    /// inert link (a source that ran or dropped it at once) or a source that is gone.
    func source(at index: Int) -> CancellationCore? {
        switch index {
        case 0: first.observedCore
        case 1: second.observedCore
        default: others[index - 2].observedCore
        }
    }
}

/// A linked request's handlers on its sources, to remove when it is cancelled or released: the
/// first two inline, any others in an array, so that a request linked to one or two sources (a
/// caller's token and a shutdown token) allocates nothing to keep them.
struct SourceLinks {
    fileprivate var first = CancellationRegistration.inert
    fileprivate var second = CancellationRegistration.inert
    fileprivate var others: [CancellationRegistration] = []
    /// How many were appended, inert ones included.
    private(set) var count = 0

    mutating func append(_ link: CancellationRegistration) {
        switch count {
        case 0: first = link
        case 1: second = link
        default: others.append(link)
        }
        count += 1
    }

    /// Removes every handler, in the order they were appended; outside any lock (a removed
    /// handler's release may run user `deinit`s). Returns whether the first two were removed before
    /// they started (so they are never called).
    @discardableResult
    func unregisterAll() -> (first: Bool, second: Bool) {
        guard count > 0 else { return (false, false) }
        let removed = (first: first.unregister(), second: second.unregister())
        for link in others { link.unregister() }
        return removed
    }
}
