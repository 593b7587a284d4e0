import FutureLib
import FutureTestSupport
import TestSupport
import Testing

/// A future keeps its value in two raw words when it fits (and may be moved bitwise), in a box
/// otherwise, and destroys it itself (`Internal/StoredValue.swift`): every kind of value is read
/// back intact, as often as asked, and released exactly once, when the future goes.
@Suite struct StoredValueTests {
    /// Four references: 32 bytes, boxed.
    struct Large: Sendable {
        let a, b, c, d: Tracked
    }

    /// A weak reference cannot be moved bitwise: boxed although it is small.
    struct Weak: Sendable {
        weak var weak: Tracked?
        let strong: Tracked
    }

    /// Completes a future with `value` in each way, reads the result several times, and checks
    /// that the value's `references` tracked objects live exactly as long as the future.
    func check<Value: Sendable>(
        references: Int,
        _ make: (DeinitCounter) -> Value,
        _ same: (Value, Value) -> Bool
    ) {
        for way in 0..<3 {
            let counter = DeinitCounter()
            do {
                let value = make(counter)
                let future: Future<Value>
                switch way {
                case 0: future = Future(value: value)
                case 1:
                    let promise = Promise<Value>()
                    promise.fulfill(value)
                    future = promise.future
                default: future = Future(value: value).map(on: .synchronous) { $0 }
                }
                for _ in 0..<3 {
                    guard case .success(let read)? = future.result else {
                        Issue.record("no value")
                        return
                    }
                    #expect(same(read, value))
                }
                withExtendedLifetime(future) {}
                #expect(counter.deallocated == 0)
            }
            #expect(counter.deallocated == references)
        }
    }

    @Test func `a trivial value is read back`() {
        check(references: 0, { _ in 42 }, ==)
        check(references: 0, { _ in (1.5, UInt8(7)) }, ==)
    }

    @Test func `a reference is kept by the future and released once with it`() {
        check(references: 1, { $0.make() }, { $0 === $1 })
        check(references: 1, { (counter: DeinitCounter) -> Tracked? in counter.make() }, { $0! === $1! })
    }

    @Test func `a string of two words, small or on the heap, is read back`() {
        check(references: 0, { _ in "short" }, ==)
        check(references: 0, { _ in String(repeating: "long enough for the heap ", count: 4) }, ==)
    }

    @Test func `a value larger than two words is boxed and released once`() {
        check(
            references: 4,
            { Large(a: $0.make(), b: $0.make(), c: $0.make(), d: $0.make()) },
            { $0.a === $1.a && $0.b === $1.b && $0.c === $1.c && $0.d === $1.d }
        )
    }

    @Test func `a value that cannot be moved bitwise is boxed and released once`() {
        #expect(!_isBitwiseTakable(Weak.self))  // so that this case takes the box, on every platform
        check(references: 1, { Weak(weak: nil, strong: $0.make()) }, { $0.strong === $1.strong })
    }

    /// Runs its jobs inline: a continuation it runs registers the next one while the completer is
    /// still dispatching, so that one queues behind the completer (the state's `…Queuing` cases).
    struct InlineContext: ExecutionContext {
        func execute(_ work: @escaping @Sendable () -> Void) { work() }
    }

    /// Fulfils a promise with `value` while a continuation registers another behind the completer,
    /// and checks that both see the value and that it is released once, with the future.
    func checkQueuedBehindCompleter<Value: Sendable>(references: Int, _ make: (DeinitCounter) -> Value) {
        let counter = DeinitCounter()
        do {
            let promise = Promise<Value>()
            let future = promise.future
            let seen = Counter()
            future.onSuccess(on: InlineContext()) { _ in
                seen.increment()
                future.onSuccess(on: InlineContext()) { _ in seen.increment() }
            }
            promise.fulfill(make(counter))
            #expect(seen.value == 2)
            #expect(future.result != nil)
            #expect(counter.deallocated == 0)
        }
        #expect(counter.deallocated == references)
    }

    @Test func `a value read by continuations queued behind the completer is released once`() {
        checkQueuedBehindCompleter(references: 1) { $0.make() }
        checkQueuedBehindCompleter(references: 4) { Large(a: $0.make(), b: $0.make(), c: $0.make(), d: $0.make()) }
    }

    /// The contract's million-deep chain (Documentation/Guarantees.md) with a value that the futures must release: each of the
    /// million futures holds it, inline or in a box, and destroys its copy in its `deinit`.
    func chainOfAMillion<Value: Sendable>(_ value: Value) async -> Value? {
        await onHeavyThread { () -> Value? in
            let head = Promise<Value>()
            var last = head.future
            for _ in 0..<Scale.million {
                let next = Promise<Value>()
                next.resolve(with: last)
                last = next.future
            }
            head.fulfill(value)
            return last.result.flatMap { try? $0.get() }
        }
    }

    @Test func `a million-deep chain passes a reference, inline or boxed, and releases it once`() async {
        let counter = DeinitCounter()
        do {
            let tracked = counter.make()
            let inline = await chainOfAMillion(tracked)
            #expect(inline === tracked)
            let boxed = await chainOfAMillion(Large(a: tracked, b: tracked, c: tracked, d: tracked))
            #expect(boxed?.d === tracked)
        }
        #expect(counter.deallocated == 1)
    }

    @Test func `a failed future releases its error`() {
        let counter = DeinitCounter()
        struct Failure: Error {
            let tracked: Tracked
        }
        do {
            let future = Future<Tracked>(error: Failure(tracked: counter.make()))
            #expect(future.result?.isFailure == true)
            withExtendedLifetime(future) {}
            #expect(counter.deallocated == 0)
        }
        #expect(counter.deallocated == 1)
    }
}

extension Result {
    fileprivate var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
