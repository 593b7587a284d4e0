import Dispatch
import FutureLib
import Synchronization
import TestSupport
import Testing

// The "after" halves of Documentation/Migration.md, one section per library, in order. The
// "before" halves are the other libraries' code and are not compiled here.

// MARK: - From the original FutureLib

/// A GET request whose token cancels the task: the Swift 2 README's `get(url:cancellationToken:)`.
func get(_ url: String, with client: HTTPClient, cancellationToken: CancellationToken = .none) -> Future<[UInt8]> {
    Future(cancellationToken: cancellationToken) { completion, token in
        let task = client.dataTask(with: url) { data, error in completion(data, error) }
        token.onCancel { task.cancel() }
        task.resume()
    }
}

func fromOriginalFutureLib(client: HTTPClient, url: String) -> Future<String> {
    let request = CancellationRequest()
    let queue = DispatchQueue(label: "sync queue")  // was GCDAsyncExecutionContext(queue)

    let text = get(url, with: client, cancellationToken: request.token)
        .map { bytes in String(decoding: bytes, as: UTF8.self) }
    text.onSuccess(on: queue, cancellationToken: request.token) { text in print(text) }
    text.onFailure(on: queue, cancellationToken: request.token) { error in
        if error is CancellationError { print("cancelled") }  // was CancellationError.Cancelled
    }
    return text
}

// MARK: - From SimpleFutures

func asyncRequest(_ completion: @escaping @Sendable (Int?, (any Error)?) -> Void) {
    DefaultExecutionContext().execute { completion(42, nil) }
}

func anotherAsyncRequest(_ value: Int) -> Future<String> {
    Future { "\(value)" }
}

func parsePort(_ text: String) throws -> Int {
    guard let port = Int(text) else { throw Errors.invalidResponse }
    return port
}

/// SimpleFutures' synchronous `future(parsePort("8080"))`.
func completedFromExpression(_ text: String) -> Future<Int> {
    Future(on: .synchronous) { try parsePort(text) }  // was future(parsePort(text))
}

func fromSimpleFutures() -> (Future<String>, CancellationRequest) {
    let request = CancellationRequest()  // was CancelToken()
    let mapped = Future(method: asyncRequest)  // was future(method:)
        .flatMap(cancellationToken: request.token) { anotherAsyncRequest($0) }
    mapped.onSuccess(on: DispatchQueue.main, cancellationToken: request.token) { value in print(value) }
    mapped.onFailure(on: DispatchQueue.main, cancellationToken: request.token) { error in print(error) }
    return (mapped, request)  // later: request.cancel(), was cancelFuture.cancel(cancelToken)
}

// MARK: - From Futura

enum Errors: Error {
    case invalidResponse
}

func decode(from bytes: [UInt8]) throws -> String {
    guard !bytes.isEmpty else { throw Errors.invalidResponse }
    return String(decoding: bytes, as: UTF8.self)
}

/// For the test: whether each `present(text:)` ran on the queue that carries `uiKey`.
let presentedOnUI = StreamPromise<Bool>()
let uiKey = DispatchSpecificKey<Int>()

func present(text: String) {
    presentedOnUI.fulfill(DispatchQueue.getSpecific(key: uiKey) != nil)
}
func present(error: any Error) {}
func store(text: String) {}

func fromFutura(client: HTTPClient, url: String, ui: DispatchQueue) -> CancellationRequest {
    let request = CancellationRequest()  // Futura cancelled the future itself; here its token
    let futureText = get(url, with: client, cancellationToken: request.token)
        .map { try decode(from: $0) }

    // was .switch(to: DispatchWorker.background).then { }
    futureText.onSuccess(on: DispatchQueue.global(qos: .background)) { store(text: $0) }
    // was .switch(to: DispatchWorker.main).then { }.failure { }
    futureText.onComplete(on: ui) { result in
        switch result {
        case .success(let text): present(text: text)
        case .failure(let error): present(error: error)
        }
    }
    return request  // request.cancel() was future.cancel()
}

// MARK: - From Concurrency

enum PhoneError: Error {
    case noAnswer
}

func phoneNumber() -> Future<Int> {
    Future { 5_550_100 }
}

func call(_ number: Int) -> Future<String> {
    Future {
        guard number > 0 else { throw PhoneError.noAnswer }
        return "an earful from \(number)"
    }
}

func fromConcurrency() -> Future<[String]> {
    let earful = phoneNumber().flatMap(call)  // was then(call(phoneNumber:))
    earful.onSuccess { print($0) }
    earful.onFailure { error in
        if case PhoneError.noAnswer? = error as? PhoneError { print("no answer") }  // typed: was onError
    }
    let both = [phoneNumber(), phoneNumber()].traverse { $0.flatMap(call) }  // was Future.zip([…])
    let either = [phoneNumber(), phoneNumber()].map { $0.flatMap(call) }.firstSuccess()  // was firstFinished(from:)
    return both.flatMap { all in either.map { all + [$0] } }
}

// MARK: - From BrightFutures

/// `print` is a parameter only so that the test can see what the guide's code prints, and where.
func fromBrightFutures(id: Int, ui: DispatchQueue, print: @escaping @Sendable (Any) -> Void = { Swift.print($0) }) {
    fetchUser(id)
        .flatMap { user in fetchPosts(user.id) }
        .onComplete(on: ui) { result in  // was .onSuccess(DispatchQueue.main.context) … .onFailure
            switch result {
            case .success(let posts): print(posts.count)
            case .failure(let error): print(error)
            }
        }
}

/// BrightFutures' InvalidationToken in a reusable cell: a request per model.
final class ImageCell: Sendable {
    private let request = Mutex(CancellationRequest())
    private let shown = Mutex<Image?>(nil)

    var image: Image? { shown.withLock { $0 } }
    var token: CancellationToken { request.withLock { $0.token } }  // for the test

    func prepareForReuse() {
        let previous = request.withLock { request in
            defer { request = CancellationRequest() }
            return request
        }
        previous.cancel()  // was token.invalidate(); token = InvalidationToken()
    }

    func show(_ user: User, on ui: some ExecutionContext) {
        let token = request.withLock { $0.token }
        download(user.avatarURL, cancellationToken: token)
            .map(cancellationToken: token) { render($0) }
            .onSuccess(on: ui, cancellationToken: token) { [self] image in  // was onSuccess(token.validContext)
                shown.withLock { $0 = image }
            }
    }
}

// MARK: - From PromiseKit

final class Spinner: Sendable {
    func start() {}
    func stop() {}
}

func fromPromiseKit(id: Int, spinner: Spinner, ui: DispatchQueue) -> Future<Image> {
    spinner.start()
    let avatar = fetchUser(id)  // was firstly { fetchUser(id) }
        .flatMap { user in download(user.avatarURL) }  // was .then
        .map { render($0) }  // was .map
        .ensure(on: ui) { spinner.stop() }  // was .ensure
    avatar.onSuccess(on: ui) { image in print(image.bytes.count) }  // was .done
    avatar.onFailure(on: ui) { error in print(error) }  // was .catch
    return avatar
}

func whenAndAfter(id: Int) -> Future<(User, [Post])> {
    let both = zip(fetchUser(id), fetchPosts(id))  // was when(fulfilled: a, b)
    let later = Future(value: (), after: .milliseconds(10))  // was after(seconds: 2)
    return later.flatMap { both }
}

// MARK: - From SwiftNIO

func fromNIO(id: Int) async throws -> String {
    let promise = Promise<Int>()  // was eventLoop.makePromise(of: Int.self)
    promise.fulfill(id)  // was promise.succeed(id)
    let ready = Future(value: 1)  // was eventLoop.makeSucceededFuture(1)

    let name = promise.future
        .flatMap { fetchUser($0) }  // flatMap
        .map { user -> String in  // was flatMapThrowing
            guard user.age > 0 else { throw LoadError.notFound }
            return user.name
        }
        .recoverWith { _ in Future(value: "anonymous") }  // was flatMapError
    name.onComplete { result in print(result) }  // was whenComplete
    let all = [name, ready.map { "\($0)" }].sequence()  // was EventLoopFuture.whenAllSucceed(_:on:)
    return try await all.hop(to: DispatchQueue(label: "loop")).value().joined()  // was hop(to:), get()
}

// MARK: - From .NET TPL

func fetchUserAsync(_ id: Int, cancellationToken: CancellationToken) -> Future<User> {
    fetchUser(id, cancellationToken: cancellationToken)
}

func fromTPL(id: Int) async throws -> String {
    let source = CancellationRequest(cancelAfter: .seconds(30))  // new CancellationTokenSource(TimeSpan)
    // await FetchUserAsync(id, cts.Token)
    let user = try await fetchUserAsync(id, cancellationToken: source.token).value()

    let completion = Promise<Int>()  // new TaskCompletionSource<int>()
    completion.fulfill(1)  // SetResult(1)

    let all = [fetchUser(1), fetchUser(2)].sequence()  // Task.WhenAll
    let any = [fetchUser(3), fetchUser(4)].firstCompleted()  // Task.WhenAny (its result, not the task)
    // ContinueWith(…, cts.Token, …, TaskScheduler.Default)
    let continued = any.map(on: .default, cancellationToken: source.token) { $0.name }
    let limited = try await continued.value(timeout: .seconds(20))  // await task.WaitAsync(TimeSpan)
    let count = try await all.value().count + completion.future.value()
    return "\(user.name) \(limited) \(count)"
}

// MARK: - Tests

@Suite struct MigrationExamples {
    @Test func futureLibAndSimpleFutures() async throws {
        #expect(try await fromOriginalFutureLib(client: HTTPClient(), url: "abc").value() == "abc")
        let (mapped, request) = fromSimpleFutures()
        #expect(try await mapped.value() == "42")
        request.cancel()
    }

    @Test func cancelledRequestCancelsTheTask() async {
        let request = CancellationRequest()
        request.cancel()
        await #expect(throws: CancellationError.self) {
            try await get("x", with: HTTPClient(), cancellationToken: request.token).value()
        }
    }

    @Test func simpleFuturesSynchronousFutureIsCompleteAtOnce() {
        let port = completedFromExpression("8080")
        #expect(port.isCompleted)
        #expect(port.result.flatMap { try? $0.get() } == 8080)
        let invalid = completedFromExpression("x")
        #expect(invalid.isCompleted)
        #expect(throws: Errors.invalidResponse) { try invalid.result?.get() }
    }

    @Test(.timeLimit(.minutes(HangLimit.minutes(1)))) func futuraHandlersRunOnTheQueueTheyName() async throws {
        let ui = DispatchQueue(label: "ui")
        ui.setSpecific(key: uiKey, value: 1)
        var presented = presentedOnUI.stream.values.makeAsyncIterator()
        for _ in 0..<20 {
            _ = fromFutura(client: HTTPClient(), url: "text", ui: ui)
            #expect(try await presented.next() == true)
        }
    }

    @Test func firstFinishedIsFirstSuccess() async throws {
        let first = Promise<Int>()
        let second = Promise<Int>()
        let any = [first.future, second.future].firstSuccess()
        second.reject(PhoneError.noAnswer)
        first.reject(Errors.invalidResponse)  // the first input fails last
        await #expect(throws: Errors.invalidResponse) { try await any.value() }

        // An input cancelled last is the last failure.
        let failed = Promise<Int>()
        let cancelled = Promise<Int>()
        let none = [failed.future, cancelled.future].firstSuccess()
        failed.reject(PhoneError.noAnswer)
        cancelled.reject(CancellationError())
        await #expect(throws: CancellationError.self) { try await none.value() }

        let late = Promise<Int>()
        let won = [Future(error: PhoneError.noAnswer), late.future].firstSuccess()
        late.fulfill(3)
        #expect(try await won.value() == 3)
    }

    @Test func concurrency() async throws {
        #expect(try await fromConcurrency().value() == Array(repeating: "an earful from 5550100", count: 3))
        #expect(try await [call(0), call(7)].firstSuccess().value() == "an earful from 7")
        await #expect(throws: PhoneError.noAnswer) { try await [call(0), call(-1)].firstSuccess().value() }
        await #expect(throws: FutureError.noSuchElement) { try await [Future<Int>]().firstSuccess().value() }
    }

    @Test func brightFuturesFind() async throws {
        let test: @Sendable (Int) -> Bool = { $0 > 1 }
        let inTime = [Future(value: 1), Future(error: PhoneError.noAnswer), Future(value: 2)].map { $0.filter(test) }
        #expect(try await inTime.firstSuccess().value() == 2)
        await #expect(throws: FutureError.noSuchElement) {
            try await [Future(value: 0), Future(value: 1)].map { $0.filter(test) }.firstSuccess().value()
        }
    }

    @Test(.timeLimit(.minutes(HangLimit.minutes(1)))) func brightFutures() async throws {
        // The chain: onComplete gets the posts, on the queue it was given.
        let ui = DispatchQueue(label: "ui")
        let key = DispatchSpecificKey<Bool>()
        ui.setSpecific(key: key, value: true)
        let printed = Promise<String>()
        fromBrightFutures(id: 1, ui: ui) { line in
            printed.fulfill("\(line) on ui: \(DispatchQueue.getSpecific(key: key) == true)")
        }
        #expect(try await printed.future.value() == "1 on ui: true")

        // The cell: a shown image arrives; reuse cancels the request the earlier show used and gives a new one.
        let user = User(id: 1, name: "a", age: 30)
        let cell = ImageCell()
        let first = cell.token
        cell.show(user, on: .synchronous)
        let expected = render(try await download(user.avatarURL).value())
        while cell.image != expected { try await Task.sleep(for: .milliseconds(1)) }  // the time limit bounds it
        cell.prepareForReuse()
        #expect(first.isCancellationRequested)
        #expect(!cell.token.isCancellationRequested && cell.token != first)
    }

    /// The differences the BrightFutures rows of Migration.md state, each checked.
    @Suite(.timeLimit(.minutes(HangLimit.minutes(1)))) struct BrightFuturesDifferences {
        enum Late: Error { case first, second }

        @Test func failFastInTimeNotInInputOrder() async throws {
            let first = Promise<Int>()
            let second = Promise<Int>()
            let all = [first.future, second.future].sequence()
            let both = first.future.zip(second.future)
            let folded = [first.future, second.future].fold(initial: 0) { $0 + $1 }
            let traversed = [first.future, second.future].traverse { $0 }
            second.reject(Late.second)  // the later input fails first
            await #expect(throws: Late.second) { try await all.value() }
            await #expect(throws: Late.second) { try await both.value() }
            await #expect(throws: Late.second) { try await folded.value() }
            await #expect(throws: Late.second) { try await traversed.value() }
            first.reject(Late.first)
        }

        @Test func errorsPassUnwrappedAndAnInvalidatedTokenIsCancellation() async throws {
            await #expect(throws: PhoneError.noAnswer) {
                try await Future<Int>(error: PhoneError.noAnswer).map { $0 }.value()
            }
            let request = CancellationRequest()
            let pending = Promise<Int>()
            let derived = pending.future.map(cancellationToken: request.token) { $0 }
            request.cancel()  // was token.invalidate()
            await #expect(throws: CancellationError.self) { try await derived.value() }
            let promise = Promise<Int>()
            #expect(promise.tryFulfill(1))
            #expect(!promise.tryFulfill(2))  // was BrightFuturesError.illegalState
            #expect(try await promise.future.value() == 1)
        }

        @MainActor @Test func mainActorRunsLaterEvenOnTheMainActor() async throws {
            let ran = Promise<Bool>()
            Future(value: 1).onSuccess(on: .mainActor) { _ in ran.fulfill(true) }
            #expect(ran.future.result == nil)  // ImmediateOnMainExecutionContext would have run it here
            #expect(try await ran.future.value())
        }

        @Test func callbacksOfOneFutureOnAConcurrentContextMayOverlap() async throws {
            let promise = Promise<Int>()
            let meeting = CancellationRequest()
            let arrived = Atomic(0)
            let overlapped = Promise<Bool>()
            for _ in 0..<2 {
                promise.future.onSuccess(on: .default) { _ in
                    if arrived.add(1, ordering: .acquiringAndReleasing).newValue == 2 {
                        meeting.cancel()
                    } else {
                        // A library wait: the pool runs the other callback meanwhile, at the same time as this one.
                        overlapped.fulfill(meeting.token.wait(timeout: HangLimit.timeout(.seconds(30))))
                    }
                }
            }
            promise.fulfill(1)
            #expect(try await overlapped.future.value())
        }

        @Test func delayMaterializeFallbacksAndResults() async throws {
            let clock = ManualClock()
            let value = Future(value: 5).flatMap { value in Future(value: value, after: .seconds(1), clock: clock) }
            let failure = Future<Int>(error: PhoneError.noAnswer)
                .flatMap { value in Future(value: value, after: .seconds(1), clock: clock) }
                .recoverWith { error in
                    Future(value: (), after: .seconds(1), clock: clock).map { _ -> Int in throw error }
                }
            await clock.waitForPendingTimers(2)
            #expect(value.result == nil && failure.result == nil)
            clock.advance(by: .seconds(1))
            #expect(try await value.value() == 5)
            await #expect(throws: PhoneError.noAnswer) { try await failure.value() }

            let materialized = Future<Int>(error: PhoneError.noAnswer).transform { result in .success(result) }
            let outcome = try await materialized.value()
            #expect(throws: PhoneError.noAnswer) { try outcome.get() }
            #expect(try await Future<Int>(error: PhoneError.noAnswer).recover { _ in 0 }.value() == 0)  // was ?? 0
            let parsed = Future(value: "8080").map { text in try Result { try parsePort(text) }.get() }
            #expect(try await parsed.value() == 8080)
            let other = Future(value: 3)
            let promise = Promise<Int>()
            promise.resolve(with: other)  // was Future(other:)
            #expect(try await promise.future.value() == 3)
        }
    }

    @Test func promiseKitNIOAndTPL() async throws {
        _ = try await fromPromiseKit(id: 2, spinner: Spinner(), ui: DispatchQueue(label: "ui")).value()
        let (user, posts) = try await whenAndAfter(id: 3).value()
        #expect(user.id == 3 && posts.count == 1)
        #expect(try await fromNIO(id: 4) == "user 41")
        #expect(try await fromTPL(id: 5).hasPrefix("user 5"))
    }
}
