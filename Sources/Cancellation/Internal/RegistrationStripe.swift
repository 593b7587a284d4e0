import FutureLibConcurrencyHelpers

/// One stripe of a striped request (``RegistrationStripes``): a list behind a spin lock of its own.
///
/// What it buys (`RoundsDriver 11-2`, two threads registering and unregistering on one shared
/// token): only the threads of this stripe's processor take this lock and write this line.
///
/// ### Lifetime
/// - The core keeps the stripe for as long as the request can be cancelled: a handler whose
///   registration was dropped still runs at cancellation.
/// - A registration stored here holds the stripe's ``StripeOwner`` (which holds the stripe), not
///   the core: the core's reference count is not written per operation. The stripe owns its lock
///   and list: registrations may hold it after the core is gone, and `unregister()` then finds it
///   closed and empty.
/// - It reaches the core only weakly (`unregisterAndWait` asks the core whether the handler is
///   running: only while a cancellation, which holds the core, runs it).
/// - A request with a timer or links can be cancelled after the request object is gone, for as
///   long as a token or registration of it observes it: there a registration must keep the core.
///   So once the request has them (``pin(_:)``), a registration stored here holds the core, as it
///   does in the request's own list; its stamp is odd, which tells `unregister()` so
///   (``RegistrationStripes/isStripeOwned(_:)``). The stripe lets go of its owner then, and the
///   owner keeps the core until the last registration made before is gone.
final class RegistrationStripe: @unchecked Sendable {
    // Sendable: `line` is reached only while holding its lock; `bits` and `core` never change.
    typealias Handler = RegistrationList.Handler
    typealias Key = RegistrationList.Key

    /// The list and what goes with it, behind the stripe's lock.
    private struct Guarded {
        var list = RegistrationList()
        /// Closed by cancellation or abandonment: stores nothing any more.
        var isClosed = false
        /// What a registration stored here holds; nil once registrations hold the core (the
        /// request has a timer or links), or the core is gone.
        var owner: StripeOwner?
    }

    /// Bytes of `line`: two 64-byte lines, since x86 processors fetch lines in adjacent pairs.
    private static let lineSize = 128
    /// Where `Guarded` starts in the line, after the lock.
    private static let guardedOffset = 16

    /// The lock at offset 0 and `Guarded` at ``guardedOffset``: one allocation of its own, aligned
    /// to ``lineSize``, so that two stripes' locks never share a line.
    let line: UnsafeMutableRawPointer
    /// The stripe's number plus one, in the top 4 bits of a key's slot (``RegistrationStripes/isStriped(_:)``).
    private let bits: UInt32
    /// The request's core: read by ``CancellationRegistration/observedCore`` too.
    weak let core: CancellationCore?
    /// 128 bytes after the fields, so that this object's fields, which every registration in the
    /// stripe reads, share no 128-byte pair of lines with the object malloc places next: the stripes
    /// and their owners are allocated one after another, and a registration in another stripe writes
    /// its owner's header.
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
        let owner = StripeOwner(self)
        withLock { $0.owner = owner }
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
        Self.withLock(line, body)
    }

    /// `withLock` on the line of a stripe, reached without the stripe object (``StripeOwner/line``).
    @inline(__always)
    private static func withLock<Result>(_ line: UnsafeMutableRawPointer, _ body: (inout Guarded) -> Result) -> Result {
        let lock = line.assumingMemoryBound(to: SpinLock.self)
        lock.pointee.lock()
        defer { lock.pointee.unlock() }
        return body(&(line + guardedOffset).assumingMemoryBound(to: Guarded.self).pointee)
    }

    /// Where ``append(_:count:)`` stored a handler, and what its registration holds: `owner`, or
    /// the core when `owner` is nil (see "Lifetime" above).
    struct Appended {
        var key: Key
        var owner: StripeOwner?
    }

    /// Stores `handler` under a stamp made of `count` (from ``RegistrationStripes/nextStamp()``);
    /// nil when the stripe is closed. The stamp is odd when the registration must hold the core
    /// (see "Lifetime" above), even when it holds the stripe's owner, retained here, under the
    /// lock: ``pin(_:)`` may let go of it on another thread.
    @inline(__always)  // into the core's striped `onCancel` path: one call less (`RoundsDriver 11-2`)
    func append(_ handler: @escaping Handler, count: UInt64, notifiesOnRelease: Bool) -> Appended? {
        let appended = withLock { guarded -> Appended? in
            guard !guarded.isClosed else { return nil }
            guard let owner = guarded.owner else {
                let key = guarded.list.append(handler, stamp: count << 1 | 1, notifiesOnRelease: notifiesOnRelease)
                return Appended(key: key, owner: nil)
            }
            let key = guarded.list.append(handler, stamp: count << 1, notifiesOnRelease: notifiesOnRelease)
            return Appended(key: key, owner: owner)
        }
        guard var appended else { return nil }
        appended.key.slot |= bits
        return appended
    }

    /// What a removal carries out of the lock, in a named type: a bare closure crossing `withLock`'s
    /// generic result is wrapped in a heap-allocated thunk.
    private struct Removed {
        var handler: Handler?
    }

    /// The slot of `key` in the stripe's list.
    @inline(__always)
    private static func local(_ key: Key) -> Key {
        Key(slot: key.slot & UInt32(RegistrationList.maximumCount - 1), generation: key.generation)
    }

    /// Like `unregister`, and when the handler is running on another thread, waits until it returned.
    func unregisterAndWait(_ key: Key) {
        let removed = remove(key)
        if removed != nil {
            _ = consume removed  // released here, outside the lock
            return
        }
        // Not in the stripe: it ran, is running, was removed or dropped. Only a cancellation, which
        // holds the core, can be running it: if the core is gone, so is the handler.
        core?.waitForStripedHandler(key)
    }

    /// Removes the handler stored under `key`: for a registration, or for a cancellation.
    func remove(_ key: Key) -> Handler? {
        Self.remove(key, line: line)
    }

    /// `remove` on the line of a stripe, for a registration's `unregister()`: its owner keeps the
    /// line's address (``StripeOwner/line``), one dependent load less than through the stripe.
    @inline(__always)
    static func remove(_ key: Key, line: UnsafeMutableRawPointer) -> Handler? {
        withLock(line) { Removed(handler: $0.list.remove(local(key))) }.handler
    }

    /// Closes the stripe (cancellation) and adds the stamp and key of every handler stored to
    /// `entries`. The handlers stay, for ``remove(_:)``.
    func close(into entries: inout [RegistrationList.StampedKey]) {
        withLock { guarded in
            guarded.isClosed = true
            guarded.list.stampsAndKeys(into: &entries, stripeBits: bits)
        }
    }

    /// Closes the stripe and takes its list: dropping it releases the handlers still stored (the
    /// request can no longer be cancelled, or its cancellation took them all) and the slab.
    func closeAndTake() -> RegistrationList {
        withLock { guarded in
            guarded.isClosed = true
            var taken = RegistrationList()
            swap(&taken, &guarded.list)
            return taken
        }
    }

    /// The request got a timer or links: from now on registrations hold `core`, and the owner that
    /// registrations from before hold keeps `core` until they are all gone. The stripe lets go of
    /// its owner: returned, for the caller to release outside every lock. Called with the request's
    /// lock held (stripe lock inside request lock): only a retain here.
    func pin(_ core: CancellationCore) -> StripeOwner? {
        withLock { guarded in
            guard guarded.owner != nil else { return nil }
            // Registrations take the owner only under this lock: held by none now, none will.
            if !isKnownUniquelyReferenced(&guarded.owner!) { guarded.owner!.pinnedCore = core }
            return guarded.owner.take()
        }
    }

    /// Takes `owner`'s pin on the core, under the lock ``pin(_:)`` stored it under: for the
    /// owner's `deinit`, which releases it outside the lock.
    func takePin(of owner: StripeOwner) -> CancellationCore? {
        withLock { _ in owner.pinnedCore.take() }
    }

    /// Lets go of the owner when the core is gone (the owner holds the stripe: a cycle otherwise).
    /// Returned, for the caller to release outside every lock.
    func releaseOwner() -> StripeOwner? {
        withLock { $0.owner.take() }
    }

    /// How many handlers the stripe stores: O(n), for tests and debug descriptions.
    var registrationCount: Int {
        withLock { $0.list.countStored() }
    }
}
