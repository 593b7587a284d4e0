import Cancellation
import TestSupport
import Testing

/// Registers a handler on `token`, which nothing can cancel any more, and checks that it was
/// neither stored (its capture is released at once) nor run, and that unregistering finds nothing.
func expectOnCancelStoresNothing(on token: CancellationToken, sourceLocation: SourceLocation = #_sourceLocation) {
    let counter = DeinitCounter()
    let runs = Counter()
    let registration: CancellationRegistration
    do {
        let tracked = counter.make()
        registration = token.onCancel {
            tracked.touch()
            runs.increment()
        }
    }
    #expect(counter.deallocated == 1, "stored", sourceLocation: sourceLocation)
    #expect(runs.value == 0, "run", sourceLocation: sourceLocation)
    #expect(!registration.unregister(), sourceLocation: sourceLocation)
}
