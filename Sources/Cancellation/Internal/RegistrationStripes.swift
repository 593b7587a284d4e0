import Synchronization

/// The per-processor registration lists of a request whose one lock was found contended: the server
/// pattern, where every concurrent piece of work registers on one shutdown or request token and
/// unregisters again. .NET partitions a token's registrations by processor for the same reason.
///
/// What it buys (benchmark scenario 11, `RoundsDriver 11-2`: two threads registering and
/// unregistering on one shared token, against a token each): with one list behind one lock the two
/// threads take turns on that lock and its cache line, about 10 times the cost of a token each.
/// Here each processor has a list behind a lock of its own (a ``SpinLock``), on a cache line of its own, so two
/// threads that run at the same moment touch different lines.
///
/// A request starts without stripes and gets them only once its lock was seen contended
/// (``CancellationCore``): a token used from one thread at a time pays nothing for them.
///
/// ### What stays as it was
/// - O(1) unregister: the stripe's number is in the top bits of the key's slot.
/// - Exactly once: cancelling or abandoning the request closes every stripe under its lock; a
///   closed stripe stores nothing, so a handler is either in a list the canceller collects, or
///   runs (or is dropped) in `onCancel`.
/// - Newest first: every handler stored in a stripe gets a stamp from one atomic counter (the
///   core's, see ``CancellationCore``). The
///   read-modify-writes of one atomic are totally ordered, in an order that agrees with
///   happens-before, so a registration that happened before another has a smaller stamp; a
///   cancellation merges the stripes' lists by stamp. (The request's own list holds only handlers
///   that no striped one happened before; they run after the striped ones, see ``CancellationCore``.)
final class RegistrationStripes: @unchecked Sendable {
    // Sendable: the memory is `count` stripes, each reached only while holding its lock; the
    // pointer itself never changes.
    typealias Handler = RegistrationList.Handler
    typealias Key = RegistrationList.Key

    /// One list and whether it still stores, behind its stripe's lock.
    struct Stripe {
        var list = RegistrationList()
        var isClosed = false
    }

    /// Bytes per stripe: two 64-byte lines, since x86 processors fetch lines in adjacent pairs. Two
    /// stripes' locks never share a line (false sharing would bring the contention back).
    private static let lineSize = 128
    /// Where a stripe's `Stripe` starts in its line, after its lock.
    private static let stripeOffset = 16

    /// Stripe `i`'s lock at `i * lineSize`, and its `Stripe` at `i * lineSize + stripeOffset`.
    private let memory: UnsafeMutableRawPointer
    /// `count - 1`; `count` is a power of two.
    private let mask: UInt
    /// ``CurrentProcessor/schedGetCPU``, read once here rather than through a lazy global per call.
    private let schedGetCPU: (@convention(c) () -> Int32)?

    /// The number of stripes: the processors online rounded up to a power of two, from 2 to 8 (the
    /// top 4 bits of a key's slot name the stripe, 1 to 15).
    static let count: Int = {
        var count = 2
        while count < min(CurrentProcessor.count, 8) { count *= 2 }
        return count
    }()

    init() {
        let count = Self.count
        memory = .allocate(byteCount: count * Self.lineSize, alignment: Self.lineSize)
        assert(
            Self.stripeOffset >= MemoryLayout<SpinLock>.size && Self.stripeOffset % MemoryLayout<Stripe>.alignment == 0
        )
        assert(Self.stripeOffset + MemoryLayout<Stripe>.size <= Self.lineSize)
        for index in 0..<count {
            let line = memory + index * Self.lineSize
            line.bindMemory(to: SpinLock.self, capacity: 1).initialize(to: SpinLock())
            (line + Self.stripeOffset).bindMemory(to: Stripe.self, capacity: 1).initialize(to: Stripe())
        }
        mask = UInt(count - 1)
        schedGetCPU = CurrentProcessor.schedGetCPU
    }

    deinit {
        for index in 0..<Self.count {
            let line = memory + index * Self.lineSize
            line.assumingMemoryBound(to: SpinLock.self).deinitialize(count: 1)
            (line + Self.stripeOffset).assumingMemoryBound(to: Stripe.self).deinitialize(count: 1)
        }
        memory.deallocate()
    }

    /// Runs `body` on stripe `index` while holding its lock. Never call user code from `body`.
    @inline(__always)
    private func withStripe<Result>(_ index: Int, _ body: (inout Stripe) -> Result) -> Result {
        let line = memory + index * Self.lineSize
        let lock = line.assumingMemoryBound(to: SpinLock.self)
        lock.pointee.lock()
        defer { lock.pointee.unlock() }
        return body(&(line + Self.stripeOffset).assumingMemoryBound(to: Stripe.self).pointee)
    }

    /// Whether `key` lives in a stripe (and not in the request's own list).
    @inline(__always)
    static func isStriped(_ key: Key) -> Bool {
        key.slot >> 28 != 0
    }

    /// The stripe of the calling thread's processor.
    var currentIndex: Int {
        Int(truncatingIfNeeded: CurrentProcessor.index(using: schedGetCPU) & mask)
    }

    /// Stores `handler` under `stamp` in stripe `index` (``currentIndex``, or any, for tests); nil
    /// when the stripes are closed.
    ///
    /// The stamp is taken before the stripe's lock, to keep the section short: the stamps, not the
    /// list's own order, order the handlers at cancellation.
    @inline(__always)  // into the core's striped `onCancel` path: one call less (scenario 11-2)
    func append(_ handler: @escaping Handler, stamp: UInt64, inStripe index: Int) -> Key? {
        let key = withStripe(index) { stripe -> Key? in
            guard !stripe.isClosed else { return nil }
            return stripe.list.append(handler, stamp: stamp)
        }
        guard var key else { return nil }
        key.slot |= UInt32(index + 1) << 28
        return key
    }

    /// A removed handler, in a named type: a bare closure crossing `withStripe`'s generic result is
    /// wrapped in a heap-allocated thunk.
    private struct Removed {
        var handler: Handler?
    }

    /// Removes the handler stored under `key`, a striped key, if it is still there.
    @inline(__always)  // into the core's striped `unregister` path: one call less (scenario 11-2)
    func remove(_ key: Key) -> Handler? {
        let local = Key(slot: key.slot & UInt32(RegistrationList.maximumCount - 1), generation: key.generation)
        return withStripe(Int(key.slot >> 28) - 1) { Removed(handler: $0.list.remove(local)) }.handler
    }

    /// Closes every stripe, each under its lock (cancellation), and returns the stamp and key of every
    /// handler stored, newest first. The handlers stay in their lists, where an `unregister` can
    /// still remove them until the canceller takes each out (``remove(_:)``).
    func close() -> [RegistrationList.StampedKey] {
        var entries: [RegistrationList.StampedKey] = []
        for index in 0..<Self.count {
            withStripe(index) { stripe in
                stripe.isClosed = true
                stripe.list.stampsAndKeys(into: &entries, stripeBits: UInt32(index + 1) << 28)
            }
        }
        entries.sort { $0.stamp > $1.stamp }
        return entries
    }

    /// Closes every stripe and takes its list: the caller drops them outside every lock, which
    /// releases the handlers still stored (the request can no longer be cancelled) and the slabs.
    func closeAndTake() -> [RegistrationList] {
        (0..<Self.count).map { index in
            withStripe(index) { stripe in
                stripe.isClosed = true
                var taken = RegistrationList()
                swap(&taken, &stripe.list)
                return taken
            }
        }
    }

    /// How many handlers the stripes store: O(n), for tests and debug descriptions.
    var registrationCount: Int {
        (0..<Self.count).reduce(0) { count, index in count + withStripe(index) { $0.list.countStored() } }
    }
}
