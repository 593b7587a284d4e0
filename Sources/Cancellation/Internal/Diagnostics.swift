// Counts for the tests that check that nothing is left behind: on a long-lived source, in the
// timer queue. Each one takes a lock or walks a list; none is meant for production code.

extension CancellationToken {
    /// How many handlers are stored on this token's request right now. O(n).
    package var registrationCount: Int {
        core?.registrationCount ?? 0
    }

    /// Gives the request per-processor stripes now, as contention on its lock would; false when it
    /// is no longer active (or for ``none``).
    package func stripeRegistrations() -> Bool {
        core?.stripeForTesting() ?? false
    }

    /// Runs `body` while holding the request's lock, so that a registration from another thread
    /// finds it taken, as contention would make it (for tests of striping). `body` must not use
    /// this token's request.
    package func holdingRegistrationLock(_ body: () -> Void) {
        core?.holdingLockForTesting(body)
    }

    /// Whether the request's own handler list has a slab (it held more than two handlers at once).
    package var hasHandlerSlab: Bool {
        core?.hasHandlerSlab ?? false
    }

    /// Whether the request has per-processor stripes (see ``stripeRegistrations()``).
    package var isStriped: Bool {
        core?.isStriped ?? false
    }

    /// How many stripes a striped request has.
    package static var stripeCount: Int {
        RegistrationStripes.count
    }

    /// ``onCancel(_:)`` into stripe `index` (modulo ``stripeCount``) of a striped request, whichever
    /// processor this thread runs on: for tests of the order across stripes.
    @discardableResult
    package func onCancel(inStripe index: Int, _ handler: @escaping @Sendable () -> Void) -> CancellationRegistration {
        core?.register(handler, inStripe: index) ?? .inert
    }
}

extension CancellationRequest {
    /// How many timers of the system clock are pending (armed, not yet fired or stopped), process-wide.
    package static var pendingTimerCount: Int {
        SystemClock().pendingTimerCount
    }
}
