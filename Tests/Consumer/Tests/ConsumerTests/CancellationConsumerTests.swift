import Cancellation
import Dispatch
import Foundation
import Testing

/// The `Cancellation` product raced from many threads, as a user's code would.
@Suite(.timeLimit(.minutes(Load.minutes(2))))
struct CancellationConsumerTests {
    static let rounds = 200

    @Test func `onCancel racing cancel runs every handler exactly once`() async {
        for _ in 0..<Self.rounds {
            let request = CancellationRequest()
            let ran = Counter()
            await onThreads(3) { index in
                if index == 0 {
                    request.cancel()
                } else {
                    for _ in 0..<20 { request.token.onCancel { ran.increment() } }
                }
            }
            #expect(ran.value == 40)
        }
    }

    @Test func `unregister racing cancel: exactly one of removed and ran`() async {
        for _ in 0..<Self.rounds {
            let request = CancellationRequest()
            let ran = Counter()
            let registration = request.token.onCancel { ran.increment() }
            let removed = Counter()
            await onThreads(2) { index in
                if index == 0 {
                    request.cancel()
                } else if registration.unregister() {
                    removed.increment()
                }
            }
            #expect(ran.value + removed.value == 1)
        }
    }

    @Test func `unregisterAndWait racing cancel: the handler's writes are visible after it returns`() async {
        for _ in 0..<Self.rounds {
            let request = CancellationRequest()
            let payload = Payload()
            let registration = request.token.onCancel { payload.value = 1 }
            await onThreads(2) { index in
                if index == 0 {
                    request.cancel()
                } else {
                    registration.unregisterAndWait()
                    _ = payload.value  // finished (visible) or never runs
                }
            }
        }
    }

    @Test func `a handler sees what the cancelling thread wrote before cancel`() async {
        for _ in 0..<Self.rounds {
            let request = CancellationRequest()
            let payload = Payload()
            let seen = Counter()
            await onThreads(2) { index in
                if index == 0 {
                    payload.value = 42
                    request.cancel()
                } else {
                    request.token.onCancel { if payload.value == 42 { seen.increment() } }
                }
            }
            #expect(seen.value == 1)
        }
    }

    @Test func `a thread that sees isCancellationRequested sees the canceller's writes`() async {
        for _ in 0..<Self.rounds {
            let request = CancellationRequest()
            let payload = Payload()
            await onThreads(2) { index in
                if index == 0 {
                    payload.value = 7
                    request.cancel()
                } else {
                    while !request.token.isCancellationRequested {}
                    precondition(payload.value == 7)
                }
            }
        }
    }

    @Test func `linked requests created on threads while the source is cancelled fire once each`() async {
        for _ in 0..<50 {
            let shutdown = CancellationRequest()
            let cancelReturned = Counter()
            let ran = Counter()
            await onThreads(3) { index in
                if index == 0 {
                    shutdown.cancel()
                    cancelReturned.increment()
                } else {
                    // Kept until `cancel()` returned: a linked request that nothing can observe any
                    // more is released from its source without running its handlers.
                    var kept: [CancellationRequest] = []
                    for _ in 0..<10 {
                        let linked = CancellationRequest(linkedTo: [shutdown.token])
                        linked.token.onCancel { ran.increment() }
                        linked.token.onCancel { ran.increment() }
                        kept.append(linked)
                    }
                    while cancelReturned.value == 0 { sched_yield() }
                    withExtendedLifetime(kept) {}
                }
            }
            #expect(ran.value == 40)
        }
    }

    @Test func `linked requests dropped on threads while the source is cancelled run each handler at most once`() async
    {
        for _ in 0..<50 {
            let shutdown = CancellationRequest()
            let ran = Counter()
            await onThreads(3) { index in
                if index == 0 {
                    shutdown.cancel()
                } else {
                    for _ in 0..<10 {
                        let linked = CancellationRequest(linkedTo: [shutdown.token])
                        linked.token.onCancel { ran.increment() }
                    }
                }
            }
            #expect(ran.value <= 20)
        }
    }

    @Test func `linked requests created and dropped on threads on a live source`() async {
        let shutdown = CancellationRequest()
        let cancelled = Counter()
        await onThreads(3) { index in
            for round in 0..<300 {
                let linked = CancellationRequest(linkedTo: [shutdown.token])
                linked.token.onCancel { cancelled.increment() }
                if round % 3 == index { linked.cancel() }
            }
        }
        #expect(cancelled.value == 300)
        #expect(!shutdown.token.isCancellationRequested)
    }

    @Test func `timers firing while other threads cancel run each handler once`() async {
        for _ in 0..<20 {
            let requests = (0..<20).map { _ in CancellationRequest(cancelAfter: .milliseconds(1)) }
            let ran = Counter()
            for request in requests { request.token.onCancel { ran.increment() } }
            await onThreads(2) { index in
                for (offset, request) in requests.enumerated() where offset % 2 == index {
                    request.cancel(after: .microseconds(offset * 50))
                    if offset % 4 == 0 { request.cancel() }
                }
            }
            #expect(await eventually { ran.value == 20 })
        }
    }

    @Test func `wait on threads returns when another thread cancels`() async {
        let request = CancellationRequest()
        let woken = Counter()
        await onThreads(3) { index in
            if index == 0 {
                request.cancel(after: .milliseconds(5))
            } else if request.token.wait(timeout: Load.timeout(.seconds(60))) {
                woken.increment()
            }
        }
        #expect(woken.value == 2)
    }

    @Test func `withCancellation cancels tasks when another thread cancels the token`() async {
        let request = CancellationRequest()
        let stopped = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await withCancellation(request.token) {
                        try? await Task.sleep(for: .seconds(60))
                        if Task.isCancelled { stopped.increment() }
                    }
                }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { request.cancel() }
        }
        #expect(stopped.value == 8)
    }

    @Test func `withTaskCancellationToken hands tasks a token that another task's cancel reaches`() async {
        let ran = Counter()
        let task = Task {
            await withTaskCancellationToken { token in
                token.onCancel { ran.increment() }
                await token.wait()
            }
        }
        try? await Task.sleep(for: .milliseconds(10))
        task.cancel()
        await task.value
        #expect(ran.value == 1)
    }
}
