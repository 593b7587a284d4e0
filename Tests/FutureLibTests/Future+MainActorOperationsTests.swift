import FutureLib
import TestSupport
import Testing

/// `retry`, `withTimeout`, `race` and the free `zip` on `.mainActor`: operations start on the
/// main actor and may use its state directly.
@Suite(.timeLimit(.minutes(3)))
struct FutureMainActorOperationsTests {
    /// Main-actor state the operations touch without a hop.
    @MainActor final class Attempts {
        var count = 0
        var names: [String] = []
    }

    @Test func `retry on .mainActor calls every attempt on the main actor`() async throws {
        let attempts = Attempts()
        let result = Future<Int>.retry(maxAttempts: 3, on: .mainActor) { _ in
            MainActor.assertIsolated()
            attempts.count += 1
            return attempts.count < 3 ? Future(error: TestFailure()) : Future(value: attempts.count)
        }
        #expect(try await result.value() == 3)
        #expect(await attempts.count == 3)
    }

    @Test func `withTimeout on .mainActor starts its operation there and times out on its clock`() async throws {
        let clock = ManualClock()
        let attempts = Attempts()
        let handed = Locked<CancellationToken?>(nil)
        let never = Promise<Int>()  // kept: the work never completes
        let limited = Future<Int>.withTimeout(.seconds(5), clock: clock, on: .mainActor) { token in
            MainActor.assertIsolated()
            attempts.count += 1
            handed.withLock { $0 = token }
            return never.future
        }
        #expect(await eventually { handed.value != nil })  // the operation ran, on the main actor
        await clock.advance(by: .seconds(4))
        #expect(!limited.isCompleted)
        await clock.advance(by: .seconds(1))
        await #expect(throws: FutureError.timeout) { try await limited.value() }
        #expect(handed.value?.isCancellationRequested == true)
        #expect(await attempts.count == 1)
    }

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

    @Test func `the free zip on .mainActor completes on the main actor`() async throws {
        let name = Promise<String>()
        let age = Promise<Int>()
        let zipped = zip(name.future, age.future, on: .mainActor)
        let delivered = Promise<Bool>()
        zipped.onComplete(on: .synchronous) { _ in
            // Registered before completion: runs on the thread that completes `zipped`.
            MainActor.assertIsolated()
            delivered.fulfill(true)
        }
        name.fulfill("Ada")
        age.fulfill(36)
        let (text, number) = try await zipped.value()
        #expect(text == "Ada" && number == 36)
        #expect(try await delivered.future.value())
    }
}
