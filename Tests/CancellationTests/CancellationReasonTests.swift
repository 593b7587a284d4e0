import Cancellation
import Synchronization
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct CancellationReasonTests {
    struct ClientDisconnected: Error, Equatable {}
    struct ShuttingDown: Error, Equatable {}

    // MARK: - Semantics

    @Test func `the reason is nil until cancellation, then the one given`() {
        let request = CancellationRequest()
        #expect(request.token.cancellationReason == nil)
        request.cancel(reason: ClientDisconnected())
        #expect(request.token.cancellationReason is ClientDisconnected)
    }

    @Test func `cancel() gives CancellationError`() {
        let request = CancellationRequest()
        request.cancel()
        #expect(request.token.cancellationReason is CancellationError)
        #expect(CancellationToken.cancelled.cancellationReason is CancellationError)
        #expect(CancellationToken.none.cancellationReason == nil)
    }

    @Test func `the first cancellation wins, reason and all`() {
        let first = CancellationRequest()
        first.cancel(reason: ClientDisconnected())
        first.cancel(reason: ShuttingDown())
        first.cancel()
        #expect(first.token.cancellationReason is ClientDisconnected)

        let second = CancellationRequest()
        second.cancel()
        second.cancel(reason: ShuttingDown())
        #expect(second.token.cancellationReason is CancellationError)
    }

    @Test func `handlers see the reason, and checkCancellation still throws CancellationError`() throws {
        let request = CancellationRequest()
        let seen = Locked<[String]>([])
        request.token.onCancel {
            seen.withLock { $0.append("\(type(of: request.token.cancellationReason!))") }
        }
        request.cancel(reason: ShuttingDown())
        #expect(seen.value == ["ShuttingDown"])
        #expect(throws: CancellationError.self) { try request.token.checkCancellation() }
    }

    @Test func `a timer cancels with DeadlineExceededError, on a manual clock and at zero`() {
        let clock = ManualClock()
        let timed = CancellationRequest(cancelAfter: .seconds(2), clock: clock)
        let rearmed = CancellationRequest()
        rearmed.cancel(after: .seconds(1), clock: clock)
        rearmed.cancel(after: .seconds(2))
        clock.advance(by: .seconds(2))
        #expect(timed.token.cancellationReason as? DeadlineExceededError == DeadlineExceededError())
        #expect(rearmed.token.cancellationReason is DeadlineExceededError)

        #expect(CancellationRequest(cancelAfter: .zero).token.cancellationReason is DeadlineExceededError)
        let negative = CancellationRequest()
        negative.cancel(after: .seconds(-1))
        #expect(negative.token.cancellationReason is DeadlineExceededError)
    }

    @Test func `a timer does not replace an earlier reason`() {
        let clock = ManualClock()
        let request = CancellationRequest(cancelAfter: .seconds(1), clock: clock)
        request.cancel(reason: ClientDisconnected())
        clock.advance(by: .seconds(1))
        #expect(request.token.cancellationReason is ClientDisconnected)
    }

    @Test func `a timer on the system clock cancels with DeadlineExceededError`() async {
        let request = CancellationRequest(cancelAfter: .milliseconds(1))
        await request.token.wait()
        #expect(request.token.cancellationReason is DeadlineExceededError)
    }

    @Test func `a linked request takes the reason of its first cancelled source`() {
        let client = CancellationRequest()
        let clock = ManualClock()
        let deadline = CancellationRequest(cancelAfter: .seconds(2), clock: clock)
        let shutdown = CancellationRequest()
        let linked = CancellationRequest(linkedTo: [client.token, deadline.token, shutdown.token])
        let innerLinked = CancellationRequest(linkedTo: [linked.token])
        clock.advance(by: .seconds(2))
        client.cancel(reason: ClientDisconnected())
        shutdown.cancel(reason: ShuttingDown())
        #expect(linked.token.cancellationReason is DeadlineExceededError)
        #expect(innerLinked.token.cancellationReason is DeadlineExceededError)

        let fromCancelled = CancellationRequest(linkedTo: [shutdown.token, client.token])
        #expect(fromCancelled.token.cancellationReason is ShuttingDown)  // the first one it found cancelled
        #expect(CancellationRequest(linkedTo: [.cancelled]).token.cancellationReason is CancellationError)
    }

    @Test func `the task bridge gives CancellationError`() async {
        let reason = await Task {
            await withTaskCancellationToken { token in
                withUnsafeCurrentTask { $0?.cancel() }
                return token.cancellationReason
            }
        }.value
        #expect(reason is CancellationError)
    }

    // MARK: - Races

    final class ReasonRound: Sendable {
        let clock = ManualClock()
        let request: CancellationRequest
        let seenByHandlers = Locked<[String]>([])
        let seenByReader = Locked<String?>(nil)

        init() {
            request = CancellationRequest(cancelAfter: .seconds(1), clock: clock)
            let token = request.token
            let seen = seenByHandlers
            for _ in 0..<3 {
                token.onCancel { seen.withLock { $0.append(Self.name(token.cancellationReason)) } }
            }
        }

        static func name(_ reason: (any Error)?) -> String {
            reason.map { "\(type(of: $0))" } ?? "nil"
        }

        /// Spins until cancellation is requested, then reads the reason: it must already be the final one.
        func read() {
            while !request.isCancellationRequested {}
            seenByReader.withLock { $0 = Self.name(request.token.cancellationReason) }
        }

        func check(allowed: Set<String>) -> String? {
            let handlers = seenByHandlers.value
            let final = Self.name(request.token.cancellationReason)
            guard allowed.contains(final) else { return "unexpected reason \(final)" }
            guard handlers.count == 3, handlers.allSatisfy({ $0 == final }) else {
                return "handlers saw \(handlers), the token says \(final)"
            }
            guard seenByReader.value == final else {
                return "a reader saw \(seenByReader.value ?? "nothing"), the token says \(final)"
            }
            return nil
        }
    }

    @Test func `Race: cancel(reason:) vs the timer: exactly one reason wins and every observer sees it`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { ReasonRound() },
            actions: [
                { $0.request.cancel(reason: ClientDisconnected()) },
                { $0.clock.advance(by: .seconds(1)) },
                { $0.read() },
            ],
            check: { $0.check(allowed: ["ClientDisconnected", "DeadlineExceededError"]) }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test
    func `Race: cancel(reason:) vs cancel() from other threads: exactly one reason wins and every observer sees it`()
        async
    {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { ReasonRound() },
            actions: [
                { $0.request.cancel(reason: ClientDisconnected()) },
                { $0.request.cancel(reason: ShuttingDown()) },
                { $0.request.cancel() },
                { $0.read() },
            ],
            check: { $0.check(allowed: ["ClientDisconnected", "ShuttingDown", "CancellationError"]) }
        )
        #expect(failures.isEmpty, "\(failures)")
    }

    final class LinkedReasonRound: Sendable {
        let client = CancellationRequest()
        let shutdown = CancellationRequest()
        let linked: CancellationRequest
        let seenByHandler = Locked<String?>(nil)

        init() {
            linked = CancellationRequest(linkedTo: [client.token, shutdown.token])
            let token = linked.token
            let seen = seenByHandler
            token.onCancel { seen.withLock { $0 = ReasonRound.name(token.cancellationReason) } }
        }
    }

    @Test func `Race: sources of a linked request cancelled with different reasons: it takes one, seen by all`() async {
        let failures = await race(
            iterations: Stress.cheap,
            setup: { LinkedReasonRound() },
            actions: [
                { $0.client.cancel(reason: ClientDisconnected()) },
                { $0.shutdown.cancel(reason: ShuttingDown()) },
            ],
            check: { round in
                let final = ReasonRound.name(round.linked.token.cancellationReason)
                guard ["ClientDisconnected", "ShuttingDown"].contains(final) else {
                    return "unexpected reason \(final)"
                }
                guard round.seenByHandler.value == final else {
                    return "the handler saw \(round.seenByHandler.value ?? "nothing"), the token says \(final)"
                }
                return nil
            }
        )
        #expect(failures.isEmpty, "\(failures)")
    }
}
