import FutureTestSupport
import TestSupport

/// One step of a model run, executed by one of ``ModelScenario/threadCount`` threads.
///
/// Every operation has an `id` (its index in the scenario); the handler, continuation or
/// resolution it creates is recorded under that id.
struct ModelOperation: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        /// `requests[request].token.onCancel { record }`.
        case register(request: Int)
        /// `unregister()` of the registration made by operation `handler` (same thread, earlier).
        case unregister(handler: Int)
        /// `requests[request].cancel()`.
        case cancel(request: Int)
        /// `requests[request].cancel(after: microseconds)`.
        case cancelAfter(request: Int, microseconds: Int)
        /// `CancellationRequest(linkedTo: sources)`, dropped at once, with a handler on its token.
        case link(sources: [Int])
        /// `promises[promise].tryFulfill(value)`.
        case fulfill(promise: Int, value: Int)
        /// `promises[promise].tryReject(TestFailure(code:))`.
        case reject(promise: Int, code: Int)
        /// `onComplete`, `onSuccess` or `onFailure` on the promise's future, on `.synchronous` or
        /// on the scenario's serial queue, with the token of `token` (nil: `.none`).
        case observe(promise: Int, callback: Callback, serial: Bool, token: Int?)
        /// `combinator` applied to the future(s), observed with `onComplete(on: .synchronous)`.
        case combine(Combinator, promises: [Int], token: Int?)
    }

    enum Callback: String, Sendable, CaseIterable {
        case onComplete, onSuccess, onFailure
    }

    enum Combinator: String, Sendable, CaseIterable {
        /// `map { $0 * 2 }`
        case map
        /// `flatMap { Future(value: $0 + 1) }`
        case flatMap
        /// `recover { _ in -1 }`
        case recover
        /// `zip(a, b)`, observed as `a * 1000 + b`
        case zip
    }

    let id: Int
    let thread: Int
    let kind: Kind

    var description: String {
        let what: String
        switch kind {
        case .register(let request): what = "register h\(id) on r\(request)"
        case .unregister(let handler): what = "unregister h\(handler)"
        case .cancel(let request): what = "cancel r\(request)"
        case .cancelAfter(let request, let microseconds): what = "cancel r\(request) after \(microseconds) µs"
        case .link(let sources): what = "link \(sources.map { "r\($0)" }) and register h\(id) on it"
        case .fulfill(let promise, let value): what = "tryFulfill p\(promise) with \(value)"
        case .reject(let promise, let code): what = "tryReject p\(promise) with failure \(code)"
        case .observe(let promise, let callback, let serial, let token):
            what = "\(callback) c\(id) on p\(promise) \(serial ? "serial" : "synchronous") token \(tokenName(token))"
        case .combine(let combinator, let promises, let token):
            what = "\(combinator) c\(id) of \(promises.map { "p\($0)" }) token \(tokenName(token))"
        }
        return "#\(id) t\(thread): \(what)"
    }

    private func tokenName(_ token: Int?) -> String {
        token.map { "r\($0)" } ?? ".none"
    }
}

/// A seeded random scenario: which requests and promises exist, and the operations of each thread.
///
/// Requests 0, 1 and 2 are plain; request 3 is linked to 0 and 1. The same seed always gives the
/// same scenario (``SplitMix64``); how the threads interleave is up to the machine.
struct ModelScenario: Sendable, CustomStringConvertible {
    static let threadCount = 3
    static let plainRequestCount = 3
    /// Request 3, linked to requests 0 and 1.
    static let linkedRequest = 3
    static let linkedSources = [0, 1]
    static let requestCount = 4
    static let promiseCount = 3

    let seed: UInt64
    let operations: [ModelOperation]

    init(seed: UInt64) {
        self.seed = seed
        var random = SplitMix64(seed: seed)
        var operations: [ModelOperation] = []
        var registeredOn = Array(repeating: [Int](), count: Self.threadCount)
        let count = 8 + random.below(33)
        for id in 0..<count {
            let thread = random.below(Self.threadCount)
            let kind = Self.randomKind(&random, registered: registeredOn[thread])
            if case .register = kind { registeredOn[thread].append(id) }
            if case .link = kind { registeredOn[thread].append(id) }
            operations.append(ModelOperation(id: id, thread: thread, kind: kind))
        }
        self.operations = operations
    }

    private static func randomKind(_ random: inout SplitMix64, registered: [Int]) -> ModelOperation.Kind {
        func token() -> Int? { random.chance(30) ? nil : random.below(requestCount) }
        func promise() -> Int { random.below(promiseCount) }
        switch random.below(100) {
        case 0..<18: return .register(request: random.below(requestCount))
        case 18..<28:
            guard let handler = registered.randomElement(using: &random) else {
                return .register(request: random.below(requestCount))
            }
            return .unregister(handler: handler)
        case 28..<34: return .cancel(request: random.below(requestCount))
        case 34..<38: return .cancelAfter(request: random.below(requestCount), microseconds: random.below(300))
        case 38..<42:
            let first = random.below(requestCount)
            let second = random.below(requestCount)
            return .link(sources: first == second ? [first] : [first, second])
        case 42..<50: return .fulfill(promise: promise(), value: 1 + random.below(99))
        case 50..<55: return .reject(promise: promise(), code: 1 + random.below(9))
        case 55..<82:
            let callback = ModelOperation.Callback.allCases[random.below(3)]
            return .observe(promise: promise(), callback: callback, serial: random.chance(50), token: token())
        default:
            let combinator = ModelOperation.Combinator.allCases[random.below(4)]
            let sources = combinator == .zip ? [promise(), promise()] : [promise()]
            return .combine(combinator, promises: sources, token: token())
        }
    }

    /// The operations of one thread, in program order.
    func operations(of thread: Int) -> [ModelOperation] {
        operations.filter { $0.thread == thread }
    }

    var description: String {
        "seed \(seed) (replay: FUTURELIB_MODEL_SEED=\(seed) swift test --filter Model)\n"
            + operations.map { "  \($0)" }.joined(separator: "\n")
    }
}

extension Array {
    fileprivate func randomElement(using random: inout SplitMix64) -> Element? {
        isEmpty ? nil : self[random.below(count)]
    }
}
