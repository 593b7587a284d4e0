import Cancellation
import FutureLibConcurrencyHelpers
import Synchronization

/// Counts how many ``Tracked`` objects tied to it are deallocated: capture a `Tracked` in a
/// handler and the count tells whether the handler closure (and so its captures) was released.
package final class DeinitCounter: Sendable {
    private let count = Atomic<Int>(0)

    package init() {}

    /// How many tracked objects have been deallocated.
    package var deallocated: Int {
        count.load(ordering: .acquiring)
    }

    /// A new object that bumps this counter in its `deinit`.
    package func make() -> Tracked {
        Tracked(counter: self)
    }

    fileprivate func bump() {
        count.add(1, ordering: .releasing)
    }
}

/// An object whose deallocation is counted by a ``DeinitCounter``.
package final class Tracked: Sendable {
    private let counter: DeinitCounter

    fileprivate init(counter: DeinitCounter) {
        self.counter = counter
    }

    /// Something to call so that a closure really captures the object.
    package func touch() {}

    deinit {
        counter.bump()
    }
}

/// A weak reference that can be checked from any thread: "is the object still alive?".
/// Guarded by `Lock`, a `Mutex` that ThreadSanitizer sees.
package final class WeakProbe<Object: AnyObject & Sendable>: Sendable {
    private let reference: Lock<WeakBox>

    private struct WeakBox: @unchecked Sendable {
        // Sendable: `Object` is Sendable; the box only exists inside the Lock.
        weak var object: Object?
    }

    package init(_ object: Object) {
        reference = Lock(WeakBox(object: object))
    }

    package var isAlive: Bool {
        reference.withLock { $0.object != nil }
    }
}
