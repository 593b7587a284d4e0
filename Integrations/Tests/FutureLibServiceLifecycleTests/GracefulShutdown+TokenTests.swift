import Cancellation
import FutureLibServiceLifecycle
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(2)))
struct GracefulShutdownTokenTests {
    @Test("the graceful-shutdown token is cancelled once, on graceful shutdown, even when triggered twice")
    func shutdownTokenFiresOnce() async throws {
        let fired = Atomic(0)
        await testGracefulShutdown { trigger in
            await withGracefulShutdownToken { token in
                token.onCancel { fired.add(1, ordering: .relaxed) }
                #expect(!token.isCancellationRequested)
                trigger.triggerGracefulShutdown()
                trigger.triggerGracefulShutdown()
                await token.wait()
                #expect(token.isCancellationRequested)
            }
        }
        #expect(fired.load(ordering: .relaxed) == 1)
    }

    @Test("the token is already cancelled when graceful shutdown began before the scope")
    func alreadyShuttingDown() async {
        await testGracefulShutdown { trigger in
            trigger.triggerGracefulShutdown()
            await withGracefulShutdownToken { token in
                #expect(token.isCancellationRequested)
            }
        }
    }

    @Test("task cancellation does not cancel the graceful-shutdown token")
    func taskCancellationIsNotShutdown() async {
        await testGracefulShutdown { _ in
            let task = Task {
                await withGracefulShutdownToken { token in
                    withUnsafeCurrentTask { $0?.cancel() }
                    return token.isCancellationRequested
                }
            }
            #expect(await task.value == false)
        }
    }

    @Test("after the scope, its handlers are released without running, and a later shutdown runs none")
    func handlersReleasedAfterTheScope() async {
        let fired = Atomic(0)
        weak var captured: Probe?
        await testGracefulShutdown { trigger in
            await withGracefulShutdownToken { token in
                let probe = Probe()
                captured = probe
                token.onCancel { [probe] in
                    _ = probe
                    fired.add(1, ordering: .relaxed)
                }
            }
            #expect(captured == nil)
            trigger.triggerGracefulShutdown()
        }
        #expect(fired.load(ordering: .relaxed) == 0)
    }

    @Test("after the task-or-shutdown scope, its handlers are released without running, and a later shutdown runs none")
    func taskTokenHandlersReleasedAfterTheScope() async {
        let fired = Atomic(0)
        weak var captured: Probe?
        await testGracefulShutdown { trigger in
            await withTaskCancellationOrGracefulShutdownToken { token in
                let probe = Probe()
                captured = probe
                token.onCancel { [probe] in
                    _ = probe
                    fired.add(1, ordering: .relaxed)
                }
            }
            #expect(captured == nil)
            trigger.triggerGracefulShutdown()
        }
        #expect(fired.load(ordering: .relaxed) == 0)
    }

    @Test("outside a ServiceGroup the token is never cancelled")
    func outsideAServiceGroup() async {
        let cancellable = await withGracefulShutdownToken { token in token.isCancellationRequested }
        #expect(!cancellable)
    }

    @Test("the task-or-shutdown token is cancelled once by task cancellation")
    func taskTokenFiresOnTaskCancellation() async {
        let fired = Atomic(0)
        let started = CancellationRequest()
        let task = Task {
            await withTaskCancellationOrGracefulShutdownToken { token in
                token.onCancel { fired.add(1, ordering: .relaxed) }
                started.cancel()
                await token.wait()
            }
        }
        await started.token.wait()
        task.cancel()
        task.cancel()
        await task.value
        #expect(fired.load(ordering: .relaxed) == 1)
    }

    @Test("the task-or-shutdown token is cancelled once by graceful shutdown, not again by task cancellation")
    func taskTokenFiresOnShutdownOnce() async {
        let fired = Atomic(0)
        await testGracefulShutdown { trigger in
            await withTaskCancellationOrGracefulShutdownToken { token in
                token.onCancel { fired.add(1, ordering: .relaxed) }
                trigger.triggerGracefulShutdown()
                await token.wait()
                withUnsafeCurrentTask { $0?.cancel() }
            }
        }
        #expect(fired.load(ordering: .relaxed) == 1)
    }

    @Test(
        "the shutdown tokens say why: GracefulShutdownError for graceful shutdown, CancellationError for task cancellation"
    )
    func reasons() async {
        await testGracefulShutdown { trigger in
            await withGracefulShutdownToken { token in
                #expect(token.cancellationReason == nil)
                trigger.triggerGracefulShutdown()
                #expect(token.cancellationReason as? GracefulShutdownError == GracefulShutdownError())
                #expect("\(token.cancellationReason!)" == "graceful shutdown")
            }
            await withTaskCancellationOrGracefulShutdownToken { token in
                #expect(token.cancellationReason is GracefulShutdownError)
            }
        }
        await testGracefulShutdown { _ in
            let task = Task {
                await withTaskCancellationOrGracefulShutdownToken { token in
                    withUnsafeCurrentTask { $0?.cancel() }
                    return token.cancellationReason
                }
            }
            #expect(await task.value is CancellationError)
        }
    }

    @Test("in a ServiceGroup, a service that waits on the token stops when the group shuts down gracefully")
    func serviceGroupShutdownStopsTheService() async throws {
        let stopped = Counter()
        let running = CancellationRequest()
        let service = TokenService(running: running, stopped: stopped)
        let group = ServiceGroup(
            configuration: .init(services: [service], logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        )
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await group.run() }
            await running.token.wait()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(stopped.value.load(ordering: .relaxed) == 1)
    }
}

/// A counter that a `Service` (which must be copyable) can hold.
private final class Counter: Sendable {
    let value = Atomic(0)
}

/// A service that knows only tokens: it runs until its token is cancelled.
private struct TokenService: Service {
    let running: CancellationRequest
    let stopped: Counter

    func run() async throws {
        await withGracefulShutdownToken { token in
            token.onCancel { stopped.value.add(1, ordering: .relaxed) }
            running.cancel()
            await token.wait()
        }
    }
}

/// Held by a handler on the token: its release shows the handler was released.
private final class Probe: Sendable {}
