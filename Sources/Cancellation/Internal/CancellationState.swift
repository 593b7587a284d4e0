import Dispatch  // DispatchSemaphore
import FutureLibConcurrencyHelpers

/// The state of one cancellation request, as a pure value: every event is a `mutating` method that
/// returns what the caller must do once the lock is released (the async-algorithms pattern).
///
/// Nothing here runs a handler, signals a waiter or releases a closure: those are carried out by
/// ``CancellationCore`` after `withLock` returns.
struct CancellationState {
    typealias Handler = RegistrationList.Handler

    enum Phase {
        /// Handlers may be registered and the request may still be cancelled.
        case active
        /// `cancel()` is running the stored handlers one by one.
        case cancelling
        /// Every handler ran; nothing is stored any more.
        case cancelled
        /// Nothing can cancel the request any more (it was deallocated, with no pending timer and
        /// no source still linked to it), and it was not cancelled: it never will be.
        case abandoned
    }

    private(set) var phase = Phase.active
    /// How many registrations found the lock taken (up to ``stripingThreshold``), while there are no
    /// stripes. (Beside `phase`, in its padding: the state stays 72 bytes.)
    private var contendedRegistrations: UInt8 = 0
    /// Whether the request has per-processor stripes (``RegistrationStripes``), which the core keeps.
    private var isStriped = false
    private var handlers = RegistrationList()
    /// The handler that the cancelling thread is running right now.
    private var running: RegistrationList.Key?
    /// The thread running the handlers, while `cancelling`.
    private var cancellingThread: ThreadIdentity?
    /// Threads blocked in `unregisterAndWait()` until `running` returns.
    private var waiters: [DispatchSemaphore] = []
    /// The timer and links while the request is active (for the requests that have them), then
    /// the reason it was cancelled with (when one was given).
    private var extra = Extra.none

    /// One word for what a request needs before and after cancellation, never both at once:
    /// cancelling takes the timer and links out in the same critical section that stores the
    /// reason. A second word would move every request to a bigger heap chunk.
    private enum Extra {
        case none
        case attachments(Attachments)
        /// The reason given to `cancel(reason:)`; `none` once cancelled stands for `CancellationError()`.
        case reason(any Error)
    }

    /// The timer and links, for the requests that have them; nil for most, and once cancelled.
    private var attachments: Attachments? {
        get {
            if case .attachments(let attachments) = extra { return attachments }
            return nil
        }
        set {
            if let newValue {
                extra = .attachments(newValue)
            } else {
                extra = .none
            }
        }
    }

    /// The reason given to the cancellation that won, once cancellation was requested; nil for
    /// `CancellationError()` (what `cancel()` gives, stored as nothing).
    var reason: (any Error)? {
        if case .reason(let reason) = extra { return reason }
        return nil
    }

    // MARK: - Registration

    /// How many handlers are stored: O(n), for tests only.
    var registrationCount: Int { handlers.countStored() }

    /// Whether the handler list has a slab, for tests only.
    var hasHandlerSlab: Bool { handlers.hasSlab }

    /// What can still cancel the request besides its object, for debug descriptions only.
    var attachmentFlags: (hasTimer: Bool, isLinked: Bool, isRequestReleased: Bool) {
        (attachments?.timer != nil, attachments?.isLinked ?? false, attachments?.isRequestReleased ?? false)
    }

    enum RegisterAction {
        /// The handler is stored under this key.
        case stored(RegistrationList.Key)
        /// Cancellation was already requested: run the handler now, on this thread.
        case runNow
        /// The request can never be cancelled: drop the handler.
        case drop
    }

    mutating func register(_ handler: @escaping Handler, notifiesOnRelease: Bool) -> RegisterAction {
        switch phase {
        case .active: .stored(handlers.append(handler, notifiesOnRelease: notifiesOnRelease))
        case .cancelling, .cancelled: .runNow
        case .abandoned: .drop
        }
    }

    /// How many registrations must find the lock taken before the request gets stripes: a few, so
    /// that a lone collision (a registration racing `cancel()`, two threads meeting once) does not
    /// cost a request the stripes' memory, while a token that threads really share gets them at once
    /// (`RoundsDriver 11-2`, two threads sharing a token, finds the lock taken on most registrations).
    static let stripingThreshold: UInt8 = 8

    enum ContendedAction {
        /// The registration was handled as by ``register(_:)``.
        case registered(RegisterAction)
        /// Contention reached ``stripingThreshold``: make stripes outside the lock, install them
        /// (``stripe()``), then register there. Nothing was stored.
        case stripe
    }

    /// ``register(_:)`` for a registration that found the lock taken: counts the contention first.
    mutating func registerContended(_ handler: @escaping Handler, notifiesOnRelease: Bool) -> ContendedAction {
        if case .active = phase, !isStriped {
            // Counts up to the threshold and stays there: until a `.stripe` caller installs the
            // stripes, every contended registration gets `.stripe` too, and a count that went on
            // would overflow (and trap) after 255 of them.
            if contendedRegistrations < Self.stripingThreshold { contendedRegistrations += 1 }
            if contendedRegistrations == Self.stripingThreshold { return .stripe }
        }
        return .registered(register(handler, notifiesOnRelease: notifiesOnRelease))
    }

    enum StripeAction {
        /// Publish the new stripes: the request has them from now on. With a timer or links, the
        /// registrations stored in them must hold the core (``RegistrationStripe``, "Lifetime").
        case install(hasAttachments: Bool)
        /// Another thread gave the request its stripes first: use those.
        case installed
        /// The request is no longer active: register as usual (the handler runs at once or is dropped).
        case inactive
    }

    /// The request is to get stripes (the core makes them and publishes their address).
    mutating func stripe() -> StripeAction {
        guard case .active = phase else { return .inactive }
        if isStriped { return .installed }
        isStriped = true
        return .install(hasAttachments: hasAttachments)
    }

    /// Whether the request has a timer or links (or had them, while still active).
    var hasAttachments: Bool { attachments != nil }

    enum UnregisterAction {
        /// The handler was removed before it started; release it outside the lock.
        case removed(Handler)
        /// The handler is running on the cancelling thread right now.
        case running
        /// The handler already ran, was already removed, or was never stored.
        case gone
    }

    mutating func unregister(_ key: RegistrationList.Key) -> UnregisterAction {
        if let handler = handlers.remove(key) { return .removed(handler) }
        return running == key ? .running : .gone
    }

    /// Whether the handler stored under `key` (of a stripe) is the one running right now.
    func isRunning(_ key: RegistrationList.Key) -> Bool {
        running == key
    }

    /// Registers a waiter for the running handler `key`; false when it has already returned, or
    /// when `caller` is the thread running it (from inside a handler: waiting would wait for itself).
    mutating func waitForRunningHandler(
        _ key: RegistrationList.Key,
        semaphore: DispatchSemaphore,
        caller: ThreadIdentity
    ) -> Bool {
        guard running == key, cancellingThread != caller else { return false }
        waiters.append(semaphore)
        return true
    }

    // MARK: - Cancellation

    /// A handler handed to the cancelling thread. A named type rather than a tuple: a closure inside
    /// a tuple that crosses `withLock`'s generic result is wrapped in a heap-allocated thunk.
    typealias Next = RegistrationList.Entry

    enum CancelAction {
        /// This call moved the request to `cancelling`: stop the timer, remove the links, run
        /// `first` (if any), then keep calling ``handlerReturned()``.
        case runHandlers(first: Next?, attachments: Attachments?)
        /// The same for a request with stripes: stop the timer, remove the links, close the
        /// stripes and run their handlers (``takeStriped(_:from:)``), then the request's own list (``handlerReturned()``).
        case runStriped(attachments: Attachments?)
        /// Already cancelling, cancelled or abandoned.
        case none
    }

    /// Starts cancellation with `reason` (nil: `CancellationError()`) and hands out the newest
    /// handler in the same critical section. Only the first call has an effect: its reason stays.
    mutating func cancel(on thread: ThreadIdentity, reason: (any Error)?) -> CancelAction {
        guard case .active = phase else { return .none }
        phase = .cancelling
        cancellingThread = thread
        let attachments = attachments  // the timer and links go to the caller
        if let reason {
            extra = .reason(reason)
        } else {
            extra = .none
        }
        if isStriped { return .runStriped(attachments: attachments) }
        return .runHandlers(first: takeNewest(), attachments: attachments)
    }

    /// One step of a striped cancellation, once the previous handler (if any) returned: hands out
    /// the threads to wake (waiting for that handler), takes the handler stored under `key` out of
    /// its stripe (whose lock is taken inside this one: always in that order) and marks it running.
    /// A handler unregistered meanwhile is not there any more: nil.
    mutating func takeStriped(_ key: RegistrationList.Key, from stripes: RegistrationStripes) -> StripedStep {
        var step = StripedStep(wake: [], handler: stripes.remove(key))
        swap(&step.wake, &waiters)
        running = step.handler == nil ? nil : key
        return step
    }

    /// What ``takeStriped(_:from:)`` hands out.
    struct StripedStep {
        var wake: [DispatchSemaphore]
        var handler: Handler?
    }

    /// What the cancelling thread does after a handler returned.
    enum Step {
        /// Run this handler next.
        case run(Next)
        /// Wake these threads, waiting in `unregisterAndWait()` for the handler that just returned,
        /// then run `next` (if any). Rare: the common step carries no array to retain and release.
        case wake([DispatchSemaphore], then: Next?)
        /// Cancellation is complete.
        case finished
    }

    /// Called by the cancelling thread when the running handler returned: one critical section
    /// both releases its waiters and hands out the next handler (or completes cancellation).
    mutating func handlerReturned() -> Step {
        if !waiters.isEmpty {
            var wake: [DispatchSemaphore] = []
            swap(&wake, &waiters)
            return .wake(wake, then: takeNewest())
        }
        guard let next = takeNewest() else { return .finished }
        return .run(next)
    }

    /// Pops the newest handler and marks it running; when none is left, cancellation is complete.
    private mutating func takeNewest() -> Next? {
        guard let next = handlers.removeNewest() else {
            running = nil
            cancellingThread = nil
            phase = .cancelled
            handlers = RegistrationList()  // frees the slab; every slot is empty by now
            return nil
        }
        running = next.key
        return next
    }

    // MARK: - Lifetime

    /// What a request that can no longer be cancelled lets go of, outside the lock: its stored
    /// handlers (released without running), and its timer and links (see ``Attachments/detach()``).
    struct Remains {
        var handlers: RegistrationList
        var attachments: Attachments?
    }

    /// Active, with nothing stored: no handler (stored or running), no stripes, no timer or links.
    /// What a new request's state is, apart from the handler list's capacity and the count of
    /// contended registrations (which only decides when stripes are installed).
    var isPristine: Bool {
        guard case .active = phase, case .none = extra else { return false }
        return handlers.isEmpty && running == nil && !isStriped
    }

    /// Whether nothing can cancel the request any more and it was not cancelled.
    var isAbandoned: Bool {
        if case .abandoned = phase { return true }
        return false
    }

    /// The `CancellationRequest` object was deallocated. Without a pending timer or a source link
    /// nothing can cancel the request any more: it is abandoned (``isAbandoned``), and what it held
    /// is returned, if anything.
    mutating func requestReleased() -> Remains? {
        guard case .active = phase else { return nil }
        guard let attachments else { return abandon() }  // the common case: a plain request
        attachments.isRequestReleased = true
        return attachments.canCancel ? nil : abandon()
    }

    /// No source holds this request's link any more (each was deallocated uncancelled).
    mutating func linkReleased() -> Remains? {
        guard case .active = phase, let attachments else { return nil }
        attachments.isLinked = false
        return attachments.isRequestReleased && !attachments.canCancel ? abandon() : nil
    }

    /// Abandons the request; returns what it held, or nil when it holds nothing to release.
    ///
    /// Most requests are released holding nothing (no handler stored now, no slab, no timer or links,
    /// no stripes): they move no `Remains` out of the lock, which costs a copy of the list and its
    /// outlined destruction (InstructionCheck `request-released`). An empty list's slab is moved out
    /// too, so that it is freed now, not when the last token goes.
    private mutating func abandon() -> Remains? {
        phase = .abandoned
        guard !handlers.isEmpty || handlers.hasSlab || attachments != nil || isStriped else { return nil }
        return takeRemains()
    }

    /// The core itself is being deallocated: no request, token or registration can observe it
    /// any more, so whatever could still cancel it is stopped.
    mutating func coreReleased() -> Remains {
        takeRemains()
    }

    private mutating func takeRemains() -> Remains {
        var remains = Remains(handlers: RegistrationList(), attachments: attachments)
        swap(&remains.handlers, &handlers)
        attachments = nil
        return remains
    }

    // MARK: - Links

    /// Stores the handlers of a linked request on its sources, which hold its attachments now.
    /// Returns them when the request was cancelled meanwhile: the caller removes them.
    ///
    /// `new`: the attachments the handlers hold, made for them, which become the request's (a
    /// request is linked in its `init`, before anything else could give it attachments).
    mutating func install(
        links: SourceLinks,
        in new: Attachments?,
        isAllOf: Bool = false,
        of core: CancellationCore
    ) -> SourceLinks? {
        guard case .active = phase else { return links }
        if attachments == nil { attachments = new }
        let attachments = attach(core)
        attachments.links = links
        attachments.isLinked = true
        attachments.isAllOf = isAllOf
        return nil
    }

    /// The attachments of `core` (whose state this is), made on first use.
    private mutating func attach(_ core: CancellationCore) -> Attachments {
        if let attachments { return attachments }
        let new = Attachments(core: core)
        attachments = new
        return new
    }

    // MARK: - Deadline

    /// What can cancel the request by time, as ``CancellationCore/deadline`` reads it.
    enum DeadlineParts {
        /// Cancellation was requested: the deadline has passed.
        case cancelled
        /// Nothing can cancel it by time: no timer and no live link (or abandoned).
        case none
        /// Its timer on its clock, if any, and its links, if a source still holds them (`isAllOf`:
        /// ``CancellationCore/link(toAll:)``'s).
        case parts(timer: (any ClockTimer)?, clock: (any TimerClock)?, links: SourceLinks, isAllOf: Bool)
    }

    /// The request's timer and links, copied out for ``CancellationCore/deadline`` to read outside the lock.
    func deadlineParts() -> DeadlineParts {
        switch phase {
        case .cancelling, .cancelled: return .cancelled
        case .abandoned: return .none
        case .active: break
        }
        guard let attachments, attachments.timer != nil || attachments.isLinked else { return .none }
        return .parts(
            timer: attachments.timer,
            clock: attachments.clock,
            links: attachments.isLinked ? attachments.links : SourceLinks(),
            isAllOf: attachments.isAllOf
        )
    }

    // MARK: - Timer

    enum ArmAction {
        /// Make a timer on this clock, outside the lock, that fires these attachments'
        /// ``Attachments/fireDeadline()``, then ``install(_:on:)`` it.
        case create(any TimerClock, Attachments)
        /// The same on the system clock, with the attachments as the timer (``SystemTimer/start(after:_:)``).
        case start(Attachments)
        /// Move this existing timer, outside the lock.
        case reschedule(any ClockTimer)
        /// Cancelled or abandoned: a timer has nothing left to do.
        case none
    }

    /// Arming on `clock`, or when nil on the clock of the request's timer (else the system clock).
    ///
    /// The clock's methods are called outside the lock (a clock may be user code); concurrent
    /// calls still take effect one after the other: each reschedule or installation is atomic,
    /// and a timer cancelled meanwhile ignores a late reschedule.
    mutating func armTimer(on clock: (any TimerClock)?, of core: CancellationCore) -> ArmAction {
        guard case .active = phase else { return .none }
        let attachments = attach(core)
        if let timer = attachments.timer, let current = attachments.clock {
            if let clock, !isSameClock(clock, current) { return create(on: clock, attachments) }
            return .reschedule(timer)
        }
        return create(on: clock ?? SystemClock(), attachments)
    }

    /// A new timer: the attachments themselves the first time the system clock is asked for (a
    /// request's deadline, almost always); a timer of its own for any other clock, and for a later
    /// system timer once the first was replaced or stopped (a stopped timer never runs again).
    private func create(on clock: any TimerClock, _ attachments: Attachments) -> ArmAction {
        // The metatypes compared, not `is SystemClock`: a dynamic cast of an existential costs more
        // than the allocation this saves.
        guard !attachments.hasStarted, type(of: clock) == SystemClock.self else { return .create(clock, attachments) }
        attachments.hasStarted = true
        return .start(attachments)
    }

    /// Stores `timer`, made on `clock`; returns the timer to stop: the one it replaces, or
    /// `timer` itself when the request was cancelled or abandoned meanwhile.
    mutating func install(
        _ timer: any ClockTimer,
        on clock: any TimerClock,
        of core: CancellationCore
    ) -> (any ClockTimer)? {
        guard case .active = phase else { return timer }
        let attachments = attach(core)
        defer {
            attachments.timer = timer
            attachments.clock = clock
        }
        return attachments.timer
    }
}
