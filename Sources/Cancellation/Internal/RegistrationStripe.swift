/// One stripe of a striped request (``RegistrationStripes``): a list behind a spin lock of its own,
/// and what a registration stored in it holds (see ``RegistrationOwner``).
///
/// What it buys (benchmark scenario 11-2, two threads registering and unregistering on one shared
/// token): a registration holding its stripe, not the core, leaves the core's reference count
/// untouched per operation; only the threads of this stripe's processor write this object's count.
///
/// ### Lifetime
/// - The stripe owns its lock and list (a 128-byte line of its own): registrations may hold it after
///   the core is gone, and `unregister()` then finds the stripe closed and empty.
/// - It reaches the core only weakly (`unregisterAndWait` asks the core whether the handler is
///   running: only while a cancellation, which holds the core, runs it).
/// - A request with a timer or links can be cancelled after the request object is gone, for as
///   long as a token or registration of it observes it: there a registration must keep the core.
///   So once the request has them (`pinsCore`), a registration stored in a stripe holds the core,
///   as it does in the request's own list; its stamp is odd, which tells `unregister()` so
///   (``RegistrationStripes/isStripeOwned(_:)``). The registrations that hold the stripe from
///   before a timer was armed (`cancel(after:)` on a striped request) have the stripe keep the
///   core (`pinnedCore`) until they are all gone: their handlers were removed, or ran (the
///   stripe is closed), or the request can no longer be cancelled. Unlike a registration holding
///   the core, this also keeps it when such a registration was dropped with its handler stored:
///   until the timer fires, which then runs that handler.
final class RegistrationStripe: RegistrationOwner, @unchecked Sendable {
    // Sendable: `line` is reached only while holding its lock; `bits` and `core` never change.
    typealias Handler = RegistrationList.Handler
    typealias Key = RegistrationList.Key

    /// The list and what goes with it, behind the stripe's lock.
    private struct Guarded {
        var list = RegistrationList()
        /// Closed by cancellation or abandonment: stores nothing any more.
        var isClosed = false
        /// Whether registrations hold the core, not the stripe (the request has a timer or links).
        var pinsCore = false
        /// How many handlers are stored whose registration holds the stripe.
        var stripeOwned = 0
        /// The core, once `pinsCore`, while `stripeOwned` is not 0.
        var pinnedCore: CancellationCore?
    }

    /// Bytes of `line`: two 64-byte lines, since x86 processors fetch lines in adjacent pairs.
    private static let lineSize = 128
    /// Where `Guarded` starts in the line, after the lock.
    private static let guardedOffset = 16

    /// The lock at offset 0 and `Guarded` at ``guardedOffset``: one allocation of its own, aligned
    /// to ``lineSize``, so that two stripes' locks never share a line.
    private let line: UnsafeMutableRawPointer
    /// The stripe's number plus one, in the top 4 bits of a key's slot (``RegistrationStripes/isStriped(_:)``).
    private let bits: UInt32
    private weak let core: CancellationCore?
    /// 128 bytes after the fields, so that this object's header (its reference count, which every
    /// registration in the stripe writes) and fields share no 128-byte pair of lines with the object
    /// malloc places next: the stripes are allocated one after another, and a registration in the
    /// next stripe writes that one's header.
    private let padding: SIMD16<UInt64> = .zero

    init(index: Int, core: CancellationCore) {
        line = .allocate(byteCount: Self.lineSize, alignment: Self.lineSize)
        assert(
            Self.guardedOffset >= MemoryLayout<SpinLock>.size
                && Self.guardedOffset % MemoryLayout<Guarded>.alignment == 0
                && Self.guardedOffset + MemoryLayout<Guarded>.size <= Self.lineSize
        )
        line.bindMemory(to: SpinLock.self, capacity: 1).initialize(to: SpinLock())
        (line + Self.guardedOffset).bindMemory(to: Guarded.self, capacity: 1).initialize(to: Guarded())
        bits = UInt32(index + 1) << 28
        self.core = core
    }

    deinit {
        line.assumingMemoryBound(to: SpinLock.self).deinitialize(count: 1)
        (line + Self.guardedOffset).assumingMemoryBound(to: Guarded.self).deinitialize(count: 1)
        line.deallocate()
    }

    /// Runs `body` while holding the stripe's lock. Never call user code, nor release a closure or
    /// the core, from `body`.
    @inline(__always)
    private func withLock<Result>(_ body: (inout Guarded) -> Result) -> Result {
        let lock = line.assumingMemoryBound(to: SpinLock.self)
        lock.pointee.lock()
        defer { lock.pointee.unlock() }
        return body(&(line + Self.guardedOffset).assumingMemoryBound(to: Guarded.self).pointee)
    }

    /// Stores `handler` under a stamp made of `count` (from ``RegistrationStripes/nextStamp()``);
    /// nil when the stripe is closed. The stamp is odd when the registration must hold the core
    /// (see "Lifetime" above), even when it holds this stripe.
    @inline(__always)  // into the core's striped `onCancel` path: one call less (scenario 11-2)
    func append(_ handler: @escaping Handler, count: UInt64) -> Key? {
        let key = withLock { guarded -> Key? in
            guard !guarded.isClosed else { return nil }
            if guarded.pinsCore { return guarded.list.append(handler, stamp: count << 1 | 1) }
            guarded.stripeOwned += 1
            return guarded.list.append(handler, stamp: count << 1)
        }
        guard var key else { return nil }
        key.slot |= bits
        return key
    }

    /// What a removal carries out of the lock, in a named type: a bare closure crossing `withLock`'s
    /// generic result is wrapped in a heap-allocated thunk.
    private struct Removed {
        var handler: Handler?
        /// The core, when the removal emptied a stripe that pinned it: released by the caller.
        var unpinned: CancellationCore?
    }

    /// The slot of `key` in the stripe's list.
    @inline(__always)
    private static func local(_ key: Key) -> Key {
        Key(slot: key.slot & UInt32(RegistrationList.maximumCount - 1), generation: key.generation)
    }

    /// Removes the handler stored under `key`, a key whose registration holds this stripe. True
    /// exactly when it had not started. The handler, and the core if this let go of it, are
    /// released here, outside the lock.
    func unregister(_ key: Key) -> Bool {
        takeOut(key).handler != nil
    }

    @inline(__always)
    private func takeOut(_ key: Key) -> Removed {
        withLock { guarded in
            var removed = Removed(handler: guarded.list.remove(Self.local(key)), unpinned: nil)
            if removed.handler != nil {
                guarded.stripeOwned -= 1
                if guarded.stripeOwned == 0, guarded.pinnedCore != nil { swap(&removed.unpinned, &guarded.pinnedCore) }
            }
            return removed
        }
    }

    /// Like `unregister`, and when the handler is running on another thread, waits until it returned.
    func unregisterAndWait(_ key: Key) {
        if takeOut(key).handler != nil { return }
        // Not in the stripe: it ran, is running, was removed or dropped. Only a cancellation, which
        // holds the core, can be running it: if the core is gone, so is the handler.
        core?.waitForStripedHandler(key)
    }

    /// Removes the handler stored under `key`: for a registration that holds the core, or for a
    /// cancellation (which took the stripe's pin when it closed it, ``close(into:)``).
    func remove(_ key: Key) -> Handler? {
        withLock { Removed(handler: $0.list.remove(Self.local(key))) }.handler
    }

    /// Closes the stripe (cancellation) and adds the stamp and key of every handler stored to
    /// `entries`. The handlers stay, for ``remove(_:)``; the pin is returned, for the caller to
    /// release outside every lock (a cancelling thread holds the core from then on).
    func close(into entries: inout [RegistrationList.StampedKey]) -> CancellationCore? {
        withLock { guarded in
            guarded.isClosed = true
            guarded.list.stampsAndKeys(into: &entries, stripeBits: bits)
            return guarded.pinnedCore.take()
        }
    }

    /// What ``closeAndTake()`` hands out, for the caller to drop outside every lock.
    struct Taken {
        var list: RegistrationList
        var unpinned: CancellationCore?
    }

    /// Closes the stripe and takes its list and pin: dropping them releases the handlers still
    /// stored (the request can no longer be cancelled, or its cancellation took them all) and the slab.
    func closeAndTake() -> Taken {
        withLock { guarded in
            guarded.isClosed = true
            var taken = Taken(list: RegistrationList(), unpinned: guarded.pinnedCore.take())
            swap(&taken.list, &guarded.list)
            return taken
        }
    }

    /// The request got a timer or links: from now on registrations hold `core`, and the stripe keeps
    /// it while registrations from before, which hold the stripe, have handlers stored. Called with
    /// the request's lock held (stripe lock inside request lock): only a retain here.
    func pin(_ core: CancellationCore) {
        withLock { guarded in
            guarded.pinsCore = true
            if !guarded.isClosed, guarded.stripeOwned > 0, guarded.pinnedCore == nil { guarded.pinnedCore = core }
        }
    }

    /// How many handlers the stripe stores: O(n), for tests and debug descriptions.
    var registrationCount: Int {
        withLock { $0.list.countStored() }
    }
}
