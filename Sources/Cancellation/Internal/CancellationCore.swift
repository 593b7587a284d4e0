import Dispatch
import FutureLibConcurrencyHelpers
import Synchronization

/// The shared heart of a request: what its tokens and registrations point at.
///
/// The request owns the core; tokens and registrations hold it too, but never the request, so a
/// request is deallocated as soon as its owner lets go. (A registration stored in a stripe holds
/// the stripe's owner instead, unless the request has a timer or links: see ``StripeOwner``.) A
/// pending timer and the links on a linked request's sources reach the core only weakly: they keep
/// it cancellable, never alive.
///
/// - When the request is deallocated and no timer or link can cancel it any more, the core becomes
///   `abandoned`: ``CancellationToken/canBeCancelled`` turns false and every stored handler is
///   released.
/// - When the core itself is deallocated (the request and every token and registration of it are
///   gone, so nothing can observe it), its timer is stopped and its links are removed from the
///   sources at once: nothing that can no longer be observed is kept.
final class CancellationCore: RegistrationOwner, @unchecked Sendable {
    // Sendable: every stored property is (a lock and atomics); unchecked only because its base
    // class, ``RegistrationOwner``, is.
    typealias Handler = RegistrationList.Handler

    private let state = Lock(CancellationState())
    /// Bit 0 (``requestedBit``) mirrors "phase is cancelling or cancelled", so that
    /// `isCancellationRequested` costs one load. The other bits are the address of the request's
    /// stripes (``RegistrationStripes``, retained here; 0 while it has none), so that registrations
    /// reach them without taking `state`'s lock: set once, when registrations found that lock
    /// contended, and kept until the core is deallocated.
    ///
    /// One word for both, so that `onCancel` checks both with one load and one branch (guarded by
    /// callgrind `cancellation-register`). Written only with `state`'s
    /// lock held, so a load and a store (not a read-modify-write) update it. Not an
    /// `AtomicLazyReference` for the address: its `load()` is not inlined and costs generic
    /// metadata lookups per call.
    private let flags = Atomic<UInt>(0)
    private static let requestedBit: UInt = 1
    /// Mirrors "phase is abandoned".
    private let abandoned = Atomic<Bool>(false)

    override init() {}

    deinit {
        let flags = flags.load(ordering: .relaxed)
        // Cancelled or abandoned, it has already let go of its timer and links (and has no handlers).
        if flags & Self.requestedBit == 0, !abandoned.load(ordering: .relaxed) {
            release(state.withLock { $0.coreReleased() })  // uses the stripes: before they are released
        }
        if let stripes = Self.stripes(in: flags) { stripes.release() }
    }

    /// A core that is cancelled from the start, shared by every ``CancellationToken/cancelled``.
    static let alreadyCancelled: CancellationCore = {
        let core = CancellationCore()
        core.cancel()
        return core
    }()

    var isCancellationRequested: Bool {
        // Acquiring: a thread that sees `true` also sees everything the canceller did before `cancel()`.
        flags.load(ordering: .acquiring) & Self.requestedBit != 0
    }

    /// The reason of the cancellation that won, once requested: stored in the critical section
    /// that requested it, so every reader sees the same one. Nil until then.
    var cancellationReason: (any Error)? {
        guard isCancellationRequested else { return nil }
        return storedReason ?? BoxedErrors.cancellation
    }

    /// The reason stored by the cancellation that won; nil for `CancellationError()` or until then.
    var storedReason: (any Error)? {
        state.withLock { $0.reason }
    }

    var canBeCancelled: Bool {
        !abandoned.load(ordering: .relaxed)  // a hint only; racing deallocation is allowed either way
    }

    /// The stripes, if the request has any, without a retain: the core keeps them until its `deinit`.
    /// (The state only knows whether there are stripes: a reference there would make every
    /// request's state bigger, a bigger heap chunk per request.)
    private var cachedStripes: Unmanaged<RegistrationStripes>? {
        // Acquiring: pairs with the releasing store in `stripe(with:)`, so the stripes are seen initialized.
        Self.stripes(in: flags.load(ordering: .acquiring))
    }

    @inline(__always)
    private static func stripes(in flags: UInt) -> Unmanaged<RegistrationStripes>? {
        guard let pointer = UnsafeRawPointer(bitPattern: flags & ~requestedBit) else { return nil }
        return Unmanaged<RegistrationStripes>.fromOpaque(pointer)
    }

    // MARK: - Registration

    /// Stores `handler`, or runs it at once when cancellation was already requested.
    /// Returns its registration, inert when it ran or was dropped.
    ///
    /// With `notifiesOnRelease` (``CancellationToken/onCancelOrRelease(_:)``), a handler dropped
    /// unrun, now or later, is called once, outside every lock, with cancellation not requested.
    ///
    /// A request starts with one list behind one lock, which a token used from one thread at a time
    /// needs (callgrind `cancellation-register`). Registrations that find that lock taken count
    /// it; after a few the request gets per-processor stripes for good (``RegistrationStripes``,
    /// `RoundsDriver 11-2`). What that costs here: a try-lock in place of the lock; the stripes
    /// are checked by the same load and branch as cancellation.
    @inline(__always)  // into `onCancel`: the striped path made it too big for the optimizer to inline
    func register(_ handler: @escaping Handler, notifiesOnRelease: Bool = false) -> CancellationRegistration {
        // Acquiring: sees the stripes initialized, and what the canceller did before `cancel()`.
        let flags = flags.load(ordering: .acquiring)
        if flags != 0 { return register(handler, flags: flags, notifiesOnRelease: notifiesOnRelease) }
        guard let action = state.withLockIfAvailable({ $0.register(handler, notifiesOnRelease: notifiesOnRelease) })
        else {
            return registerContended(handler, notifiesOnRelease: notifiesOnRelease)
        }
        switch action {
        case .stored(let key):
            return CancellationRegistration(owner: self, key: key)
        case .runNow:
            return Self.runNow(handler)
        case .drop:
            return Self.drop(handler, notifiesOnRelease: notifiesOnRelease)
        }
    }

    /// `register` when cancellation was requested (run the handler now) or the request has stripes.
    @inline(never)
    private func register(
        _ handler: @escaping Handler,
        flags: UInt,
        notifiesOnRelease: Bool
    ) -> CancellationRegistration {
        if flags & Self.requestedBit != 0 { return Self.runNow(handler) }
        return registerInStripe(
            handler,
            stripes: Self.stripes(in: flags).unsafelyUnwrapped,
            notifiesOnRelease: notifiesOnRelease
        )
    }

    /// Runs a handler registered on a request whose cancellation was requested: at once, on this
    /// thread, through the ``Trampoline``, so that a handler that registers another, which registers
    /// another…, runs in constant stack (each after the one that registered it returned).
    @inline(never)
    private static func runNow(_ handler: @escaping Handler) -> CancellationRegistration {
        Trampoline.run(handler)
        return .inert
    }

    /// Drops a handler registered on a request that can no longer be cancelled: calls it first when
    /// it asked to be (``register(_:notifiesOnRelease:)``), on this thread, outside every lock.
    private static func drop(_ handler: Handler, notifiesOnRelease: Bool) -> CancellationRegistration {
        if notifiesOnRelease { handler() }
        return .inert
    }

    /// `register` once the lock was found taken: waits for it, counts the contention, and past the
    /// threshold gives the request its stripes. Out of line, to keep `register` small enough to be
    /// inlined into `onCancel`.
    @inline(never)
    private func registerContended(_ handler: @escaping Handler, notifiesOnRelease: Bool) -> CancellationRegistration {
        switch state.withLock({ $0.registerContended(handler, notifiesOnRelease: notifiesOnRelease) }) {
        case .registered(.stored(let key)):
            return CancellationRegistration(owner: self, key: key)
        case .registered(.runNow):
            return Self.runNow(handler)
        case .registered(.drop):
            return Self.drop(handler, notifiesOnRelease: notifiesOnRelease)
        case .stripe:
            let new = RegistrationStripes(core: self)  // allocated outside the lock
            // No longer active: runs or is dropped.
            guard stripe(with: new) else { return register(handler, notifiesOnRelease: notifiesOnRelease) }
            return registerInStripe(handler, notifiesOnRelease: notifiesOnRelease)
        }
    }

    /// Gives the request `new` as its stripes (or keeps those another thread gave it first) and
    /// publishes them to lock-free readers. False when the request is no longer active.
    private func stripe(with new: RegistrationStripes) -> Bool {
        let (installed, unpinned) = state.withLock { state -> (Bool, [StripeOwner?]) in
            switch state.stripe() {
            case .install(let hasAttachments):
                let unpinned = hasAttachments ? new.pin(self) : []  // see `pinStripes()`
                // Releasing: a thread that loads the address sees the stripes initialized. Retained
                // here, released by `deinit`. Stored under the lock: once, by the installing thread.
                let address = UInt(bitPattern: Unmanaged.passRetained(new).toOpaque())
                flags.store(flags.load(ordering: .relaxed) | address, ordering: .releasing)
                return (true, unpinned)
            case .installed:
                return (true, [])  // `new` is dropped by the caller, outside the lock
            case .inactive:
                return (false, [])
            }
        }
        withExtendedLifetime(unpinned) {}  // released here, outside the lock
        return installed
    }

    /// Stores `handler` in the stripe of this thread's processor, once the request has stripes.
    @inline(never)
    private func registerInStripe(_ handler: @escaping Handler, notifiesOnRelease: Bool) -> CancellationRegistration {
        registerInStripe(handler, stripes: cachedStripes.unsafelyUnwrapped, notifiesOnRelease: notifiesOnRelease)
    }

    /// The striped path of `onCancel`, inlined into its callers: one call less per registration
    /// (`RoundsDriver 11-2` counts every nanosecond of it). The registration holds the
    /// stripe, not this core (see ``RegistrationOwner``).
    @inline(__always)
    private func registerInStripe(
        _ handler: @escaping Handler,
        stripes: Unmanaged<RegistrationStripes>,
        notifiesOnRelease: Bool
    ) -> CancellationRegistration {
        stripes._withUnsafeGuaranteedRef { stripes in
            let appended = stripes.current._withUnsafeGuaranteedRef {
                $0.append(handler, count: stripes.nextStamp(), notifiesOnRelease: notifiesOnRelease)
            }
            guard let appended else {
                return closedStripe(handler, notifiesOnRelease: notifiesOnRelease)
            }
            return registration(appended)
        }
    }

    /// The registration of a handler stored in a stripe: it holds the stripe's owner, or this core
    /// when the request has a timer or links (``RegistrationStripe``, "Lifetime").
    @inline(__always)
    private func registration(_ appended: consuming RegistrationStripe.Appended) -> CancellationRegistration {
        guard let owner = appended.owner else { return CancellationRegistration(owner: self, key: appended.key) }
        return CancellationRegistration(owner: owner, key: appended.key)
    }

    /// A stripe was closed: the request was cancelled (marked before its stripes were closed: run
    /// the handler now, on this thread) or can no longer be cancelled (drop it).
    private func closedStripe(_ handler: @escaping Handler, notifiesOnRelease: Bool) -> CancellationRegistration {
        if isCancellationRequested { return Self.runNow(handler) }
        return Self.drop(handler, notifiesOnRelease: notifiesOnRelease)
    }

    /// Removes the handler stored under `key`, a key whose registration holds this core (one of the
    /// request's own list, or of a stripe once the request has a timer or links). True exactly when
    /// it had not started.
    func unregister(_ key: RegistrationList.Key) -> Bool {
        if RegistrationStripes.isStriped(key) { return unregisterFromStripe(key) }
        let action = state.withLock { $0.unregister(key) }
        if case .removed = action { return true }  // the handler is released here, outside the lock
        return false
    }

    /// `unregister` for a key of a stripe. Out of line, to keep `unregister` small.
    @inline(never)
    private func unregisterFromStripe(_ key: RegistrationList.Key) -> Bool {
        // The handler is released here, outside every lock.
        let removed = cachedStripes.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.remove(key) }
        return removed != nil
    }

    /// Like `unregister`, and when the handler is running on another thread, waits until it returned.
    func unregisterAndWait(_ key: RegistrationList.Key) {
        if RegistrationStripes.isStriped(key) {
            let removed = cachedStripes.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.remove(key) }
            if removed == nil { waitForStripedHandler(key) }  // else released here, outside every lock
            return
        }
        // Kept in a binding, not matched and discarded: a removed handler is released here, outside
        // the lock (a discarded result may be released inside it in release builds).
        let action = state.withLock { $0.unregister(key) }
        guard case .running = action else { return withExtendedLifetime(action) {} }
        waitForRunningHandler(key)
    }

    /// ``RegistrationStripe/unregisterAndWait(_:)`` for a handler no longer in its stripe: waits if
    /// it is the one running. A striped cancellation takes each handler out of its stripe while
    /// holding the request's lock, and marks it running in the same section: so that lock tells
    /// "running" from "gone".
    func waitForStripedHandler(_ key: RegistrationList.Key) {
        guard isCancellationRequested, state.withLock({ $0.isRunning(key) }) else { return }
        waitForRunningHandler(key)
    }

    /// Waits until the handler stored under `key`, running on another thread, returned.
    ///
    /// A blocking wait like ``CancellationToken/wait(timeout:)``: it goes through ``ThreadBlocking``,
    /// so that on a thread of FutureLib's pool the pool starts another thread meanwhile (the handler
    /// may need one to finish), a capped context's job gives up its slot, and on a queue FutureLib
    /// queues work to, that work runs while it waits. The cancelling thread moves `running` past
    /// `key` in the critical section that signals the semaphore, and never back (keys are unique):
    /// so "not running" is the wait's end, whatever else wakes the semaphore.
    private func waitForRunningHandler(_ key: RegistrationList.Key) {
        let semaphore = DispatchSemaphore(value: 0)
        let caller = ThreadIdentity.current
        let mustWait = state.withLock { $0.waitForRunningHandler(key, semaphore: semaphore, caller: caller) }
        guard mustWait else { return }
        _ = ThreadBlocking.wait(for: semaphore, until: .distantFuture) { !state.withLock { $0.isRunning(key) } }
    }

    // MARK: - Cancellation

    /// Requests cancellation with `reason` (nil: `CancellationError()`): runs every stored handler
    /// once, newest first, on this thread, taking the lock once per handler and never holding it
    /// while a handler runs. Only the first call has an effect, its reason included.
    func cancel(reason: (any Error)? = nil) {
        let thread = ThreadIdentity.current
        let action = state.withLock { state -> CancellationState.CancelAction in
            let action = state.cancel(on: thread, reason: reason)
            if case .none = action {
            } else {
                // Releasing: pairs with the acquiring load in `isCancellationRequested`.
                flags.store(flags.load(ordering: .relaxed) | Self.requestedBit, ordering: .releasing)
            }
            return action
        }
        // Consumed, and the first handler taken out of its binding: no copy of it may outlive its run (see
        // `runHandlers`).
        switch consume action {
        case .runHandlers(var first, let attachments):
            attachments?.detach()
            runHandlers(startingWith: first.take())
        case .runStriped(let attachments):
            attachments?.detach()
            // The state says striped only once the address is published, under the same lock.
            cachedStripes.unsafelyUnwrapped._withUnsafeGuaranteedRef { runStriped($0) }
        case .none:
            return
        }
    }

    /// The cancelling loop of a request with stripes: closes them, runs their handlers newest first
    /// (by stamp), each taken out of its stripe in its own critical section, then the request's own
    /// list as ``runHandlers(startingWith:)`` does.
    ///
    /// The own list runs last: its handlers were stored under the lock by threads that had not seen
    /// the stripes, so none of them happened after a striped registration (which would have seen them).
    private func runStriped(_ stripes: RegistrationStripes) {
        for entry in stripes.close() {
            let step = state.withLock { $0.takeStriped(entry.key, from: stripes) }
            for waiter in step.wake { waiter.signal() }
            step.handler?()
        }
        withExtendedLifetime(stripes.closeAndTake()) {}  // empty lists now: frees their slabs, outside every lock
        continueHandlers()
    }

    /// The cancelling loop: runs `next`, then asks the state for the following handler, until none is left.
    ///
    /// Each entry is consumed by the call that runs it, so its closure is released right after it
    /// returned, with no retain and release around the call, and before the threads waiting for it in
    /// `unregisterAndWait()` are woken: a closure that holds something whose life ends with the waiter's
    /// scope (`withCancellation`'s, an `async let` child task) is gone when the waiter returns. (A local of
    /// this function, not a variable captured by a closure: the move checker tracks only locals.)
    private func runHandlers(startingWith first: consuming CancellationState.Next?) {
        guard var next = first.take() else { return }
        while true {
            Self.run(consume next)
            switch state.withLock({ $0.handlerReturned() }) {
            case .run(let following):
                next = following
            case .wake(let waiters, let following):
                for waiter in waiters { waiter.signal() }
                guard let following else { return }
                next = following
            case .finished:
                return
            }
        }
    }

    /// ``runHandlers(startingWith:)`` for a striped cancellation, whose last striped handler (if
    /// any) returned: wakes its waiters and runs the request's own list, or completes cancellation.
    private func continueHandlers() {
        switch state.withLock({ $0.handlerReturned() }) {
        case .run(let first):  // consumed, as in `cancel(reason:)`
            runHandlers(startingWith: consume first)
        case .wake(let waiters, var first):
            for waiter in waiters { waiter.signal() }
            runHandlers(startingWith: first.take())
        case .finished:
            return
        }
    }

    private static func run(_ entry: consuming CancellationState.Next) {
        entry.handler()
    }

    // MARK: - Lifetime

    /// The `CancellationRequest` object was deallocated; without a pending timer or a source link,
    /// nothing can cancel this core any more.
    func requestReleased() {
        guard !isCancellationRequested else { return }  // cancelling let go of the timer and links
        let remains = state.withLock { state in
            let remains = state.requestReleased()
            if state.isAbandoned { abandoned.store(true, ordering: .relaxed) }
            return remains
        }
        // Consumed, not bound: a copy left here would release the handlers after `release` returned,
        // outside the trampoline, and a chain of released requests would nest again.
        if remains != nil { release(consume remains) }
    }

    /// No source can cancel this linked request any more (see ``Attachments/sourceReleased()``
    /// and ``AllOfArrival``).
    func linkReleased() {
        guard !isCancellationRequested else { return }  // cancelling removes the links: the common case
        let remains = state.withLock { state in
            let remains = state.linkReleased()
            if state.isAbandoned { abandoned.store(true, ordering: .relaxed) }
            return remains
        }
        // Consumed, not bound: a copy left here would release the handlers after `release` returned,
        // outside the trampoline, and a chain of released requests would nest again.
        if remains != nil { release(consume remains) }
    }

    /// Stops the timer, removes the links and releases the handlers (dropping `remains`), outside any lock.
    ///
    /// Through the ``Trampoline``: what is released may be the last hold on other requests (a linked
    /// request's registration on its source, a source's handler that links a request), whose own
    /// release would nest inside this one; a chain of any depth is released in constant stack.
    private func release(_ remains: consuming CancellationState.Remains?) {
        // Stripes are installed only while the request is active, under the lock that took `remains`:
        // if it has any, their address is seen here. Their lists are taken now, while this core is
        // alive (it may be in its `deinit`), and their handlers released with the rest.
        let lists = cachedStripes?._withUnsafeGuaranteedRef { $0.closeAndTake() }
        guard remains?.attachments != nil || remains?.handlers.isEmpty == false || lists != nil else { return }
        // Both consumed: the only references left are the trampoline's, which releases them after
        // the work, outside every lock (the handlers' captures' `deinit`s are user code). Run at
        // once, as a request released outside any other release is, this allocates nothing
        // (`RoundsDriver --server-allocations`, the release step).
        Trampoline.run(with: (consume remains, consume lists)) { remains, lists in
            remains?.attachments?.detach()  // stops the timer, removes the links
            // What the slabs' `deinit`s do for theirs when the lists are dropped, right after this.
            remains?.handlers.notifyInlineReleased()
            for list in lists ?? [] { list.notifyInlineReleased() }
        }
    }

    // MARK: - Links

    /// Links this request to `sources`: the first of them to be cancelled cancels it.
    ///
    /// Each source holds this request's ``Attachments`` as its handler, which reach this core
    /// weakly: a live source keeps the request cancellable while something can observe it, never
    /// alive. The links are removed when the request is cancelled, or when the core is deallocated.
    func link(to sources: some Collection<CancellationToken>) {
        guard sources.contains(where: \.canBeCancelled) else { return }
        // Linking happens in `init`: these become the request's attachments (``install(links:in:)``).
        let attachments = Attachments(core: self)
        var links = SourceLinks()
        for source in sources where source.canBeCancelled {
            if isCancellationRequested { break }
            guard let core = source.core else { continue }
            links.append(attachments.link(to: core, index: links.count))
        }
        install(links: links, in: attachments)
        // The linking thread is done: if no source holds the link now, this reports `linkReleased()`.
        attachments.sourceReleased()
    }

    /// Keeps `links`, this request's handlers on its sources, to remove them when it is cancelled
    /// or released; removes them at once when it was cancelled meanwhile (by an already cancelled
    /// source). `attachments`: the ones the links' handlers hold, when they were made for them.
    private func install(links: SourceLinks, in attachments: Attachments? = nil, isAllOf: Bool = false) {
        let (removed, unpinned) = state.withLock { state in
            let removed = state.install(links: links, in: attachments, isAllOf: isAllOf, of: self)
            return (removed, state.hasAttachments ? pinStripes() : [])
        }
        withExtendedLifetime(unpinned) {}  // released here, outside the lock
        removed?.unregisterAll()
    }

    /// Links this request to `sources` so that it is cancelled once every one of them is, with the
    /// reason of the last. With a source that can never be cancelled (``CancellationToken/none``,
    /// or one whose request can no longer be), or none at all, it stores nothing: it never will be.
    ///
    /// Each source holds one ``AllOfArrival``; they share one ``AllOfLink``, which reaches this core
    /// weakly, as a linked request's ``Attachments`` do. A source that lets go of its arrival
    /// without having been cancelled can never complete the set: the request is told that no
    /// source can cancel it any more.
    func link(toAll sources: [CancellationToken]) {
        guard !sources.isEmpty, sources.allSatisfy(\.canBeCancelled) else { return }
        let link = AllOfLink(self, count: sources.count)
        var links = SourceLinks()
        for source in sources {
            if isCancellationRequested { break }
            guard let core = source.core else { continue }
            let arrival = AllOfArrival(link, source: core)
            // The closure captures the arrival alone, which then serves as its context: no allocation.
            links.append(core.register { arrival.arrive() })
        }
        install(links: links, isAllOf: true)
    }

    /// The request has a timer or links now, which can cancel it after the request object is gone,
    /// for as long as a token or registration of it observes it: from now on striped registrations
    /// hold this core, and the stripes' owners keep it for those from before, until they are gone
    /// (``StripeOwner``). Called with the state's lock held; returns the owners the stripes let go
    /// of, for the caller to release outside it. Stripes installed later are pinned as they are
    /// installed (``stripe(with:)``).
    private func pinStripes() -> [StripeOwner?] {
        cachedStripes?._withUnsafeGuaranteedRef { $0.pin(self) } ?? []
    }

    // MARK: - Timer

    /// Arms (or re-arms) the timer that cancels this core `delay` from now, on `clock` (nil: the
    /// clock of its timer, else the system clock). The timer reaches the core weakly: it keeps the
    /// request cancellable while something can observe it, never alive. Cancelling, abandoning
    /// or deallocating the core stops and releases the timer.
    func arm(after delay: Duration, on clock: (any TimerClock)?) {
        switch state.withLock({ $0.armTimer(on: clock, of: self) }) {
        case .none:
            return
        case .reschedule(let timer):
            timer.reschedule(after: delay)
        case .create(let clock, let attachments):
            // The closure captures the attachments alone, which then serve as its context: no
            // allocation (guarded by AllocationCheck `request-deadline`). They reach this core weakly.
            // A clock of the user's own gets a ``TrackedTimer`` around its timer: it keeps the deadline.
            if type(of: clock) == ManualClock.self || type(of: clock) == SystemClock.self {
                install(clock.makeTimer(after: delay) { attachments.fireDeadline() }, on: clock)
            } else {
                install(TrackedTimer(on: clock, after: delay) { attachments.fireDeadline() }, on: clock)
            }
        case .start(let attachments):
            // The attachments are the timer: nothing to allocate (AllocationCheck `request-deadline`).
            attachments.start(after: delay) { attachments.fireDeadline() }
            install(attachments, on: SystemClock())
        }
    }

    /// The request's timer and links, copied in one critical section, for ``deadline`` to read
    /// outside it (see `DeadlineReading.swift`).
    var deadlineParts: CancellationState.DeadlineParts {
        if isCancellationRequested { return .cancelled }
        return state.withLock { $0.deadlineParts() }
    }

    /// Keeps `timer`, made and started outside the lock, and stops the one it replaces (or `timer`
    /// itself, when the request was cancelled or abandoned meanwhile).
    private func install(_ timer: any ClockTimer, on clock: any TimerClock) {
        let (stale, unpinned) = state.withLock { state in
            let stale = state.install(timer, on: clock, of: self)
            return (stale, state.hasAttachments ? pinStripes() : [])
        }
        withExtendedLifetime(unpinned) {}  // released here, outside the lock
        stale?.cancel()
    }

    // MARK: - Tests

    /// Gives the request its stripes now, as contention would (for tests); false when it is no longer active.
    func stripeForTesting() -> Bool {
        stripe(with: RegistrationStripes(core: self))
    }

    /// Runs `body` while holding the state's lock (for tests of striping: see
    /// ``CancellationToken/holdingRegistrationLock(_:)``).
    func holdingLockForTesting(_ body: () -> Void) {
        state.withLock { _ in body() }
    }

    /// Whether the request has stripes.
    var isStriped: Bool {
        cachedStripes != nil
    }

    /// `register` into stripe `index` (modulo their count) of a request with stripes, whichever
    /// processor this thread runs on: for tests of the order across stripes.
    func register(_ handler: @escaping Handler, inStripe index: Int) -> CancellationRegistration {
        if isCancellationRequested { return Self.runNow(handler) }
        guard let stripes = cachedStripes?.takeUnretainedValue() else {
            preconditionFailure("the request has no stripes")
        }
        guard let appended = stripes.stripe(index).append(handler, count: stripes.nextStamp(), notifiesOnRelease: false)
        else {
            return closedStripe(handler, notifiesOnRelease: false)
        }
        return registration(appended)
    }

    /// Whether the core is as new: active, with no handler, stripes, timer or links. (Whether
    /// anything else holds it is the caller's question: ``CancellationRequest/isReusable``.)
    var isPristine: Bool {
        guard flags.load(ordering: .acquiring) == 0, !abandoned.load(ordering: .relaxed) else { return false }
        return state.withLock { $0.isPristine }
    }

    /// How many handlers are stored on this core right now (O(n)): for the tests that check that
    /// nothing is left behind on a long-lived source.
    var registrationCount: Int {
        state.withLock { $0.registrationCount } + (cachedStripes?.takeUnretainedValue().registrationCount ?? 0)
    }

    /// Whether the handler list has a slab: for the test that an abandoned request frees it.
    var hasHandlerSlab: Bool {
        state.withLock { $0.hasHandlerSlab }
    }

    /// The state as debug descriptions show it, read in one critical section (O(n)).
    var debugSnapshot: CancellationDebugSnapshot {
        let striped = cachedStripes?.takeUnretainedValue().registrationCount ?? 0
        return state.withLock { state in
            let flags = state.attachmentFlags
            return CancellationDebugSnapshot(
                phase: state.phase,
                handlers: state.registrationCount + striped,
                hasTimer: flags.hasTimer,
                isLinked: flags.isLinked,
                isRequestReleased: flags.isRequestReleased
            )
        }
    }
}

/// The link of a request cancelled once all of its sources are (``CancellationCore/link(toAll:)``):
/// counts the sources still to be cancelled, and cancels the request, reaching its core weakly,
/// when the last one is, with that one's reason.
private final class AllOfLink: Sendable {
    private weak let core: CancellationCore?
    private let remaining: Atomic<Int>

    init(_ core: CancellationCore, count: Int) {
        self.core = core
        remaining = Atomic(count)
    }

    /// One source was cancelled (each arrives at most once): the last to arrive cancels the request.
    func arrive(reason: (any Error)?) {
        // Acquiring and releasing: the last arrival happens after every other source's cancellation.
        guard remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0, let core else { return }
        // Through the trampoline, as a linked request's ``Attachments`` fire.
        Trampoline.run(with: (core, reason)) { core, reason in core.cancel(reason: reason) }
    }

    /// A source let go of its arrival without being cancelled: the set can never be complete.
    func lost() {
        core?.linkReleased()
    }
}

/// What one source of an all-of request holds: arrives once when the source is cancelled; released
/// without having arrived (the source can no longer be cancelled, or the request let go of its
/// links), it tells the link that the set can never be complete.
private final class AllOfArrival: Sendable {
    private let link: AllOfLink
    /// The source, strongly: read by the handler stored on it, which may run after the source's
    /// `register` or `cancel` returned (queued on this thread's ``Trampoline`` when it was already
    /// running), when nothing else may hold the source any more. The cycle this makes through the
    /// source's handler list ends when the source runs or drops the handler, or the request removes it.
    private let source: CancellationCore
    private let arrived = Atomic<Bool>(false)

    init(_ link: AllOfLink, source: CancellationCore) {
        self.link = link
        self.source = source
    }

    /// The source was cancelled: arrives with its reason (nil: `CancellationError()`).
    func arrive() {
        arrived.store(true, ordering: .relaxed)  // read by `deinit`, after the handler's release
        link.arrive(reason: source.storedReason)
    }

    deinit {
        if !arrived.load(ordering: .relaxed) { link.lost() }
    }
}
