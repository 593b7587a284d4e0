import FutureLib
import FutureTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct FutureRaceTests {
    @Test
    func `race completes with the first result, cancels the losers' tokens and releases the losers and their timers`()
        async throws
    {
        let tokens = Locked<[Int: CancellationToken]>([:])
        let loserProbes = Locked<[WeakProbe<Future<Int>>]>([])
        let winner = Promise<Int>()
        let counter = DeinitCounter()
        let loser: @Sendable (Int) -> @Sendable (CancellationToken) -> Future<Int> = { index in
            { [tracked = counter.make()] token in
                tracked.touch()
                tokens.withLock { $0[index] = token }
                // A loser that would hold a timer for an hour unless its token stops it.
                let future = Future(value: index, after: .seconds(3600), cancellationToken: token)
                loserProbes.withLock { $0.append(WeakProbe(future)) }
                return future
            }
        }
        let raced = Future.race([
            loser(1),
            { @Sendable token in
                tokens.withLock { $0[0] = token }
                return winner.future
            },
            loser(2),
        ])
        #expect(await eventually { tokens.value.count == 3 })
        winner.fulfill(42)
        #expect(try await raced.value() == 42)
        let handed = tokens.value
        #expect(handed[0]?.isCancellationRequested == false)  // the winner is left alone
        #expect(handed[1]?.isCancellationRequested == true)
        #expect(handed[2]?.isCancellationRequested == true)
        // Nothing keeps the losers, their timers or the operations (and their captures) alive.
        #expect(await eventually { loserProbes.value.allSatisfy { !$0.isAlive } })
        #expect(await eventually { counter.deallocated == 2 })
    }

    @Test func `race: the first failure wins too, and no operations fail with noSuchElement`() async {
        let first = Future<Int>.race([
            { _ in Future(error: SampleError()) }, { Future(value: 0, after: .seconds(3600), cancellationToken: $0) },
        ])
        await #expect(throws: SampleError()) { try await first.value() }
        let none = Future<Int>.race([])
        await #expect(throws: FutureError.noSuchElement) { try await none.value() }
    }

    @Test func `race: cancelling the caller's token fails it at once and cancels every operation`() async {
        let request = CancellationRequest()
        let tokens = Locked<[CancellationToken]>([])
        let raced = Future<Int>.race(
            cancellationToken: request.token,
            [Int](0..<3).map { _ in
                { token in
                    tokens.withLock { $0.append(token) }
                    return Future(value: 0, after: .seconds(3600), cancellationToken: token)
                }
            }
        )
        #expect(await eventually { tokens.value.count == 3 })
        request.cancel()
        #expect(isCancellation(raced.result))
        #expect(tokens.value.allSatisfy { $0.isCancellationRequested })
    }
}

extension FutureRaceTests {
    /// `on: .mainActor`: each operation on the main actor.
    @Suite struct OnMainActor {
        @Test func `race on .mainActor calls each operation on the main actor and cancels the losers`() async throws {
            let attempts = Attempts()
            let loser = Locked<CancellationToken?>(nil)
            let slow = Promise<String>()  // kept: the slow mirror never answers
            let winner = Future<String>.race(
                on: .mainActor,
                [
                    { @MainActor token in
                        attempts.names.append("slow")
                        loser.withLock { $0 = token }
                        return slow.future
                    },
                    { @MainActor _ in
                        attempts.names.append("fast")
                        return Future(value: "fast")
                    },
                ]
            )
            #expect(try await winner.value() == "fast")
            #expect(await Set(attempts.names) == ["slow", "fast"])
            #expect(await eventually { loser.value?.isCancellationRequested == true })
        }
    }
}
