import Dispatch
import FutureLib
import Synchronization
import Testing

// The examples of Documentation/ExecutionContexts.md, in order.

let stored = Mutex<[Int]>([])

func store(_ user: User) -> User {
    stored.withLock { $0.append(user.id) }
    return user
}

func refreshList() {}

func synchronousContext() -> Future<Int> {
    let doubled = Future(value: 21).map(on: .synchronous) { $0 * 2 }  // runs right here
    return doubled
}

func dispatchQueues(id: Int, ui: DispatchQueue) {
    let database = DispatchQueue(label: "com.example.database")  // serial: owns the connection

    fetchUser(id)
        .map(on: database) { user in store(user) }  // one at a time, in order
        .onSuccess(on: ui) { _ in refreshList() }  // on the main thread
}

func hopping(id: Int, to queue: DispatchQueue) {
    fetchUser(id)
        .hop(to: queue)
        .onSuccess(on: .synchronous) { user in print(user.name) }  // on the main queue
}

func defaultPool() -> Future<Int> {
    let checksum = Future(on: .default) { try sumOfSquares(upTo: 10_000) }  // `on: .default` is the default
    return checksum
}

func limited(urls: [String]) -> ([Future<Image>], Future<[[UInt8]]>, Int) {
    let fourAtATime = LimitedExecutionContext(maxConcurrency: 4)
    let thumbnails = urls.map { url in Future(on: fourAtATime) { render(Array(url.utf8)) } }

    fourAtATime.maxConcurrency = 8  // raise (or lower) the cap at any time
    print(fourAtATime.runningCount)  // how many slots are in use now

    let pages = urls.traverse(maxConcurrency: 4) { url in download(url) }
    return (thumbnails, pages, fourAtATime.maxConcurrency)
}

/// Runs work on one dedicated serial queue per instance, and counts the jobs.
final class CountingContext: ExecutionContext {
    private let queue = DispatchQueue(label: "com.example.counting")
    private let count = Mutex(0)

    var executed: Int { count.withLock { $0 } }

    func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            work()
            count.withLock { $0 += 1 }
        }
    }
}

@Suite struct ExecutionContextsGuideExamples {
    @Test func providedContexts() async throws {
        #expect(try await synchronousContext().value() == 42)
        let queue = DispatchQueue(label: "stand-in for main")
        dispatchQueues(id: 1, ui: queue)
        hopping(id: 2, to: queue)
        #expect(try await defaultPool().value() == 333_383_335_000)
        let (thumbnails, pages, cap) = limited(urls: ["a", "b"])
        #expect(try await thumbnails.sequence().value().count == 2)
        #expect(try await pages.value().count == 2)
        #expect(cap == 8)
        _ = MainQueue()
    }

    @Test func ownContext() async throws {
        let context = CountingContext()
        let value = try await Future(on: context) { 7 }.value()
        #expect(value == 7)
    }
}
