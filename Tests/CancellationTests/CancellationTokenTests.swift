import Cancellation
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationTokenTests {
    // MARK: - .none

    @Test func `none can never be cancelled`() throws {
        let token = CancellationToken.none
        #expect(!token.canBeCancelled)
        #expect(!token.isCancellationRequested)
        try token.checkCancellation()
    }

    @Test func `onCancel on none stores nothing and runs nothing`() {
        let counter = DeinitCounter()
        let runs = Counter()
        let registration: CancellationRegistration
        do {
            let tracked = counter.make()
            registration = CancellationToken.none.onCancel {
                tracked.touch()
                runs.increment()
            }
        }
        #expect(counter.deallocated == 1)  // not stored anywhere
        #expect(runs.value == 0)
        #expect(!registration.unregister())
    }

    // MARK: - .cancelled

    @Test func `cancelled is already cancelled`() {
        let token = CancellationToken.cancelled
        #expect(token.isCancellationRequested)
        #expect(token.canBeCancelled)
        #expect(throws: CancellationError.self) { try token.checkCancellation() }
    }

    @Test func `onCancel on cancelled runs the handler at once, exactly once`() async {
        await confirmation(expectedCount: 1) { ran in
            let registration = CancellationToken.cancelled.onCancel { ran() }
            #expect(!registration.unregister())
        }
    }

    // MARK: - Already cancelled: runs at once on the registering thread

    @Test func `onCancel on an already cancelled token runs at once, on the registering thread, exactly once`() async {
        let request = CancellationRequest()
        request.cancel()
        let outcome = await onDedicatedThread {
            () -> (runsWhenOnCancelReturned: Int, sameThread: Bool, probe: RunProbe) in
            let probe = RunProbe()  // created on the registering thread
            request.token.onCancel(probe.handler)
            return (probe.runCount, probe.ranOnRegisteringThread, probe)
        }
        #expect(outcome.runsWhenOnCancelReturned == 1)
        #expect(outcome.sameThread)
        request.cancel()  // a later cancel does not run it again (it was never stored)
        #expect(outcome.probe.runCount == 1)
    }

    @Test func `a handler that ran at once is released at once and its registration is inert`() {
        let request = CancellationRequest()
        request.cancel()
        let counter = DeinitCounter()
        let runs = Counter()
        let registration: CancellationRegistration
        do {
            let tracked = counter.make()
            registration = request.token.onCancel {
                tracked.touch()
                runs.increment()
            }
        }
        #expect(runs.value == 1)
        #expect(counter.deallocated == 1)
        #expect(!registration.unregister())
        registration.unregisterAndWait()
        request.cancel()
        #expect(runs.value == 1)
    }

    // MARK: - Token of a deallocated request

    @Test func `onCancel on a token whose request was deallocated uncancelled stores nothing and runs nothing`() {
        var request: CancellationRequest? = CancellationRequest()
        let token = request!.token
        request = nil
        #expect(!token.canBeCancelled)
        #expect(!token.isCancellationRequested)
        expectOnCancelStoresNothing(on: token)
    }

    // MARK: - checkCancellation

    @Test func `checkCancellation throws CancellationError only once cancellation was requested`() throws {
        let request = CancellationRequest()
        try request.token.checkCancellation()
        request.cancel()
        #expect(throws: CancellationError.self) { try request.token.checkCancellation() }
    }

    // MARK: - Equatable, Hashable

    @Test func `tokens of the same request are equal and hash alike`() {
        let request = CancellationRequest()
        let first = request.token
        let second = request.token
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(Set([first, second]).count == 1)
    }

    @Test func `tokens of different requests, none and cancelled are all different`() {
        let one = CancellationRequest()
        let two = CancellationRequest()
        let tokens: [CancellationToken] = [one.token, two.token, .none, .cancelled]
        #expect(Set(tokens).count == 4)
        #expect(one.token != two.token)
        #expect(one.token != .none)
        #expect(CancellationToken.none == .none)
        #expect(CancellationToken.cancelled == .cancelled)
        #expect(CancellationToken.none.hashValue == CancellationToken.none.hashValue)
    }

    @Test func `a token keeps its identity after its request is cancelled or deallocated`() {
        var request: CancellationRequest? = CancellationRequest()
        let token = request!.token
        let copy = token
        request = nil
        #expect(token == copy)
        #expect(token != .none)
    }
}
