import FutureLibConcurrencyHelpers
import Synchronization

/// The per-processor registration lists of a request whose one lock was found contended: the server
/// pattern, where every concurrent piece of work registers on one shutdown or request token and
/// unregisters again. .NET partitions a token's registrations by processor for the same reason.
///
/// What it buys (guarded by `RoundsDriver 11-2`: two threads registering and unregistering on one
/// shared token, against a token each): with one list behind one lock the two threads take turns
/// on that lock and its cache line, many times the cost of a token each.
/// Here each processor has a list behind a lock of its own (a ``SpinLock``), on a cache line of its own, so two
/// threads that run at the same moment touch different lines. A registration holds its stripe's
/// owner (a ``StripeOwner``), not the core, unless the request has a timer or links: the core's
/// reference count is not written either.
///
/// A request starts without stripes and gets them only once its lock was seen contended
/// (``CancellationCore``): a token used from one thread at a time pays nothing for them.
///
/// ### What stays as it was
/// - O(1) unregister: the stripe's number is in the top bits of the key's slot.
/// - Exactly once: cancelling or abandoning the request closes every stripe under its lock; a
///   closed stripe stores nothing, so a handler is either in a list the canceller collects, or
///   runs (or is dropped) in `onCancel`.
/// - Newest first: every handler stored in a stripe gets a stamp from one atomic counter. The
///   read-modify-writes of one atomic are totally ordered, in an order that agrees with
///   happens-before, so a registration that happened before another has a smaller stamp; a
///   cancellation merges the stripes' lists by stamp. This counter is the one line that every
///   striped registration still writes: a stamp that orders registrations by happens-before must
///   depend on what every earlier registration wrote, whichever stripe it used (per-stripe
///   counters cannot see a registration on another stripe that happened before through the
///   caller's own synchronization). It has a line of its own, so that nothing else read or
///   written per registration moves with it. (The request's own list holds only handlers
///   that no striped one happened before; they run after the striped ones, see ``CancellationCore``.)
final class RegistrationStripes: @unchecked Sendable {
    // Sendable: every field is a constant; the stripes are Sendable, the stamp counter is atomic.
    typealias Handler = RegistrationList.Handler
    typealias Key = RegistrationList.Key

    /// The stripes, `count` of them, in a 128-byte line of their own (read by every registration,
    /// written by none).
    private let stripes: UnsafeMutablePointer<RegistrationStripe>
    /// The stamp counter, alone in a 128-byte line (the one line every striped registration writes).
    private let stamps: UnsafeMutablePointer<Atomic<UInt64>>
    /// `count - 1`; `count` is a power of two.
    private let mask: UInt
    /// ``CurrentProcessor/schedGetCPU``, read once here rather than through a lazy global per call.
    private let schedGetCPU: (@convention(c) () -> Int32)?
    /// Keeps the fields above, read by every registration, off the lines of whatever malloc places
    /// next (the stripes are allocated right after this object, and registrations write their headers).
    private let padding: SIMD16<UInt64> = .zero

    /// The number of stripes: the processors online rounded up to a power of two, from 2 to 8 (the
    /// top 4 bits of a key's slot name the stripe, 1 to 15).
    static let count: Int = {
        var count = 2
        while count < min(CurrentProcessor.count, 8) { count *= 2 }
        return count
    }()

    private static let lineSize = 128

    /// Stripes for `core`'s registrations.
    init(core: CancellationCore) {
        let count = Self.count
        assert(count * MemoryLayout<RegistrationStripe>.stride <= Self.lineSize)
        stripes = UnsafeMutableRawPointer.allocate(byteCount: Self.lineSize, alignment: Self.lineSize)
            .bindMemory(to: RegistrationStripe.self, capacity: count)
        for index in 0..<count { (stripes + index).initialize(to: RegistrationStripe(index: index, core: core)) }
        stamps = UnsafeMutableRawPointer.allocate(byteCount: Self.lineSize, alignment: Self.lineSize)
            .bindMemory(to: Atomic<UInt64>.self, capacity: 1)
        stamps.initialize(to: Atomic(0))
        mask = UInt(count - 1)
        schedGetCPU = CurrentProcessor.schedGetCPU
    }

    deinit {
        // The owners hold their stripes: let go of them first (a cycle otherwise). Nothing runs here
        // (the core is gone): an owner that registrations still hold keeps its stripe, closed.
        let owners = (0..<Self.count).map { stripes[$0].releaseOwner() }
        withExtendedLifetime(owners) {}
        stripes.deinitialize(count: Self.count)
        stripes.deallocate()
        stamps.deinitialize(count: 1)
        stamps.deallocate()
    }

    /// Whether `key` lives in a stripe (and not in the request's own list).
    @inline(__always)
    static func isStriped(_ key: Key) -> Bool {
        key.slot >> 28 != 0
    }

    /// Whether `key` lives in a stripe and its registration holds the stripe's owner: its stamp
    /// (whose low half is the key's generation) is even. (Odd: it holds the core, see
    /// ``RegistrationStripe``.)
    @inline(__always)
    static func isStripeOwned(_ key: Key) -> Bool {
        isStriped(key) && key.generation & 1 == 0
    }

    /// The stripe of the calling thread's processor, unretained: this object keeps it. (Read as a
    /// reference, it would be retained and released around each registration: two atomic writes.)
    var current: Unmanaged<RegistrationStripe> {
        let index = Int(truncatingIfNeeded: CurrentProcessor.index(using: schedGetCPU) & mask)
        return UnsafeRawPointer(stripes + index).load(as: Unmanaged<RegistrationStripe>.self)
    }

    /// Stripe `index` (modulo ``count``), whichever processor this thread runs on: for tests.
    func stripe(_ index: Int) -> RegistrationStripe {
        stripes[index % Self.count]
    }

    /// A count for the stamp of a handler stored in a stripe (``RegistrationStripe/append(_:count:)``,
    /// which adds the owner bit). Relaxed: the read-modify-writes of one atomic are
    /// totally ordered, in an order consistent with happens-before, which is all that newest-first
    /// needs. Taken before the stripe's lock, to keep the section short: the stamps, not the
    /// lists' own order, order the handlers at cancellation.
    @inline(__always)
    func nextStamp() -> UInt64 {
        stamps.pointee.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Removes the handler stored under `key`, a striped key, if it is still there (cancellation).
    func remove(_ key: Key) -> Handler? {
        stripes[Int(key.slot >> 28) - 1].remove(key)
    }

    /// Closes every stripe, each under its lock (cancellation), and returns the stamp and key of every
    /// handler stored, newest first. The handlers stay in their lists, where an `unregister` can
    /// still remove them until the canceller takes each out (``remove(_:)``).
    func close() -> [RegistrationList.StampedKey] {
        var entries: [RegistrationList.StampedKey] = []
        for index in 0..<Self.count { stripes[index].close(into: &entries) }
        entries.sort { $0.stamp > $1.stamp }
        return entries
    }

    /// Closes every stripe and takes its list: the caller drops them outside every lock, which
    /// releases the handlers still stored (the request can no longer be cancelled) and the slabs.
    func closeAndTake() -> [RegistrationList] {
        (0..<Self.count).map { stripes[$0].closeAndTake() }
    }

    /// From now on registrations in the stripes hold `core`, and the owners that registrations from
    /// before hold keep it until those are gone (the request got a timer or links: see
    /// ``StripeOwner``). Called with the request's lock held: returns the owners the stripes let
    /// go of, for the caller to release once it released that lock.
    func pin(_ core: CancellationCore) -> [StripeOwner?] {
        (0..<Self.count).map { stripes[$0].pin(core) }
    }

    /// How many handlers the stripes store: O(n), for tests and debug descriptions.
    var registrationCount: Int {
        (0..<Self.count).reduce(0) { count, index in count + stripes[index].registrationCount }
    }
}
