import FutureLib

// Every ✓ cell of the forms table (Documentation/Futures.md, "Every form of every combinator"),
// one line per form, against the public API in Swift 6 language mode: this file compiling is the
// test (`make api-check` type-checks it as a client would). A form removed, or one added without
// its row, shows here. Nothing here runs.

private actor Ledger {
    var count = 0
}

@MainActor private final class Screen {
    var count = 0

    // MARK: - Futures

    func futureForms(_ future: Future<Int>, _ futures: [Future<Int>], _ ledger: Ledger, _ token: CancellationToken) {
        let context = DefaultExecutionContext()
        // onComplete, onSuccess, onFailure
        future.onComplete(on: context, cancellationToken: token) { _ in }
        future.onComplete(on: .mainActor) { _ in self.count += 1 }
        future.onComplete(on: context) { _ async in await Task.yield() }
        future.onComplete(on: .mainActor) { _ async in self.count += 1 }
        future.onComplete(on: ledger) { ledger, _ in ledger.count += 1 }
        future.onSuccess(on: context) { _ in }
        future.onSuccess(on: .mainActor) { self.count = $0 }
        future.onSuccess(on: context) { _ async in await Task.yield() }
        future.onSuccess(on: .mainActor) { value async in self.count = value }
        future.onSuccess(on: ledger) { ledger, value in ledger.count = value }
        future.onFailure(on: context, policy: .allErrors) { _ in }
        future.onFailure(on: .mainActor, policy: .allErrors) { _ in self.count += 1 }
        future.onFailure(on: context, policy: .allErrors) { _ async in await Task.yield() }
        future.onFailure(on: .mainActor, policy: .allErrors) { _ async in self.count += 1 }
        future.onFailure(on: ledger, policy: .allErrors) { ledger, _ in ledger.count += 1 }
        // map, flatMap
        _ = future.map(on: context) { $0 + 1 }
        _ = future.map(on: .mainActor) { $0 + self.count }
        _ = future.map(on: context) { value async in value + 1 }
        _ = future.map(on: .mainActor) { value async in value + self.count }
        _ = future.map(on: ledger) { ledger, value in value + ledger.count }
        _ = future.flatMap(on: context) { Future(value: $0) }
        _ = future.flatMap(on: .mainActor) { Future(value: $0 + self.count) }
        _ = future.flatMap(on: context) { value async in Future(value: value) }
        _ = future.flatMap(on: .mainActor) { value async in Future(value: value + self.count) }
        _ = future.flatMap(on: ledger) { ledger, value in Future(value: value + ledger.count) }
        // recover, recoverWith
        _ = future.recover(on: context, policy: .allErrors) { _ in 0 }
        _ = future.recover(on: .mainActor, policy: .allErrors) { _ in self.count }
        _ = future.recover(on: context, policy: .allErrors) { _ async in 0 }
        _ = future.recover(on: .mainActor, policy: .allErrors) { _ async in self.count }
        _ = future.recover(on: ledger, policy: .allErrors) { ledger, _ in ledger.count }
        _ = future.recoverWith(on: context, policy: .allErrors) { _ in Future(value: 0) }
        _ = future.recoverWith(on: .mainActor, policy: .allErrors) { _ in Future(value: self.count) }
        _ = future.recoverWith(on: context, policy: .allErrors) { _ async in Future(value: 0) }
        _ = future.recoverWith(on: .mainActor, policy: .allErrors) { _ async in Future(value: self.count) }
        _ = future.recoverWith(on: ledger, policy: .allErrors) { ledger, _ in Future(value: ledger.count) }
        // filter, transform, mapError, andThen
        _ = future.filter(on: context) { $0 > 0 }
        _ = future.filter(on: .mainActor) { $0 > self.count }
        _ = future.transform(on: context, success: { $0 + 1 }, failure: { $0 })
        _ = future.transform(on: .mainActor, success: { $0 + self.count }, failure: { $0 })
        _ = future.transform(on: context) { $0 }
        _ = future.transform(on: .mainActor) { result in result.map { $0 + self.count } }
        _ = future.mapError(on: context, policy: .allErrors) { $0 }
        _ = future.mapError(on: .mainActor, policy: .allErrors) { error in
            self.count += 1
            return error
        }
        future.andThen(on: context) { _ in }
        future.andThen(on: .mainActor) { _ in self.count += 1 }
        // ensure
        future.ensure(on: context) {}
        future.ensure(on: .mainActor) { self.count += 1 }
        future.ensure(on: context) { () async in await Task.yield() }
        future.ensure(on: .mainActor) { () async in self.count += 1 }
        // hop, timeout, zip
        _ = future.hop(to: context)
        _ = future.hop(to: .mainActor)
        _ = future.timeout(after: .seconds(1), on: context)
        _ = future.timeout(after: .seconds(1), on: .mainActor)
        _ = future.zip(Future(value: "a"), on: context)
        _ = future.zip(Future(value: "a"), on: .mainActor)
        _ = zip(future, Future(value: "a"), on: context)
        _ = zip(future, Future(value: "a"), on: .mainActor)
        // Future(on:) and Future { async }
        _ = Future(on: context) { 1 }
        _ = Future(on: .mainActor) { self.count }
        _ = Future(cancellationToken: token) { () async in 1 }
        // retry, withTimeout, race
        _ = Future<Int>.retry(maxAttempts: 2, on: context) { _ in future }
        _ = Future<Int>.retry(maxAttempts: 2, on: .mainActor) { _ in
            self.count += 1
            return future
        }
        _ = Future<Int>.withTimeout(.seconds(1), on: context) { _ in future }
        _ = Future<Int>.withTimeout(.seconds(1), on: .mainActor) { _ in
            self.count += 1
            return future
        }
        _ = Future<Int>.race(on: context, [{ _ in future }])
        _ = Future<Int>.race(
            on: .mainActor,
            [
                { @MainActor _ in
                    self.count += 1
                    return future
                }
            ]
        )
        // traverse, fold
        _ = [1, 2].traverse(on: context) { Future(value: $0) }
        _ = [1, 2].traverse(on: .mainActor) { Future(value: $0 + self.count) }
        _ = [1, 2].traverse(on: context) { value async in value }
        _ = futures.fold(on: context, initial: 0) { $0 + $1 }
        _ = futures.fold(on: .mainActor, initial: 0) { $0 + $1 + self.count }
    }

    // MARK: - Streams

    func streamForms(_ stream: FutureStream<Int>, _ future: Future<Int>, _ ledger: Ledger) {
        let context = DefaultExecutionContext()
        // onComplete, onSuccess, onFailure, onFinish
        stream.onComplete(on: context) { _ in }
        stream.onComplete(on: .mainActor) { _ in self.count += 1 }
        stream.onComplete(on: context) { _ async in await Task.yield() }
        stream.onComplete(on: .mainActor) { _ async in self.count += 1 }
        stream.onComplete(on: ledger) { ledger, _ in ledger.count += 1 }
        stream.onSuccess(on: context) { _ in }
        stream.onSuccess(on: .mainActor) { self.count = $0 }
        stream.onSuccess(on: context) { _ async in await Task.yield() }
        stream.onSuccess(on: .mainActor) { value async in self.count = value }
        stream.onSuccess(on: ledger) { ledger, value in ledger.count = value }
        stream.onFailure(on: context, policy: .allErrors) { _ in }
        stream.onFailure(on: .mainActor, policy: .allErrors) { _ in self.count += 1 }
        stream.onFailure(on: context, policy: .allErrors) { _ async in await Task.yield() }
        stream.onFailure(on: .mainActor, policy: .allErrors) { _ async in self.count += 1 }
        stream.onFailure(on: ledger, policy: .allErrors) { ledger, _ in ledger.count += 1 }
        stream.onFinish(on: context) {}
        stream.onFinish(on: .mainActor) { self.count += 1 }
        stream.onFinish(on: context) { () async in await Task.yield() }
        stream.onFinish(on: .mainActor) { () async in self.count += 1 }
        stream.onFinish(on: ledger) { ledger in ledger.count += 1 }
        // map, recover
        _ = stream.map(on: context) { $0 + 1 }
        _ = stream.map(on: .mainActor) { $0 + self.count }
        _ = stream.map(on: context) { value async in value + 1 }
        _ = stream.map(on: .mainActor) { value async in value + self.count }
        _ = stream.map(on: ledger) { ledger, value in value + ledger.count }
        _ = stream.recover(on: context, policy: .allErrors) { _ in 0 }
        _ = stream.recover(on: .mainActor, policy: .allErrors) { _ in self.count }
        _ = stream.recover(on: context, policy: .allErrors) { _ async in 0 }
        _ = stream.recover(on: .mainActor, policy: .allErrors) { _ async in self.count }
        _ = stream.recover(on: ledger, policy: .allErrors) { ledger, _ in ledger.count }
        // flatMap, recoverWith (to a future or a stream)
        _ = stream.flatMap(on: context) { Future(value: $0) }
        _ = stream.flatMap(on: .mainActor) { Future(value: $0 + self.count) }
        _ = stream.flatMap(on: context) { value -> FutureStream<Int> in FutureStream(value: value) }
        _ = stream.flatMap(on: .mainActor) { value -> FutureStream<Int> in FutureStream(value: value + self.count) }
        _ = stream.recoverWith(on: context, policy: .allErrors) { _ in Future(value: 0) }
        _ = stream.recoverWith(on: .mainActor, policy: .allErrors) { _ in Future(value: self.count) }
        _ = stream.recoverWith(on: context, policy: .allErrors) { _ -> FutureStream<Int> in FutureStream(value: 0) }
        _ = stream.recoverWith(on: .mainActor, policy: .allErrors) { _ -> FutureStream<Int> in
            FutureStream(value: self.count)
        }
        // filter, mapError, andThen
        _ = stream.filter(on: context) { $0 > 0 }
        _ = stream.filter(on: .mainActor) { $0 > self.count }
        _ = stream.mapError(on: context, policy: .allErrors) { $0 }
        _ = stream.mapError(on: .mainActor, policy: .allErrors) { error in
            self.count += 1
            return error
        }
        stream.andThen(on: context) { _ in }
        stream.andThen(on: .mainActor) { _ in self.count += 1 }
        // A future continued by a stream
        _ = future.flatMap(capacity: 1, on: context) { FutureStream(value: $0) }
        _ = future.flatMap(capacity: 1, on: .mainActor) { FutureStream(value: $0 + self.count) }
        _ = future.recoverWith(capacity: 1, on: context, policy: .allErrors) { _ in FutureStream(value: 0) }
        _ = future.recoverWith(capacity: 1, on: .mainActor, policy: .allErrors) { _ in FutureStream(value: self.count) }
    }
}
