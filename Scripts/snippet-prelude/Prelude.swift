// The stubs every documentation block may use without declaring them: a small user service,
// downloads, images, sensors and UI objects. Compiled with the blocks by
// Scripts/check-doc-snippets.py (type checking only: nothing here runs), so a stub only needs the
// right shape. Stubs for one document only go in Documents.swift.
//
// Add what a new example needs here, in the section it belongs to; keep names ordinary (what a
// reader would guess from the example) and types `Sendable`.

import Foundation
import FutureLib
import Synchronization

// MARK: - Users, posts, images

struct User: Sendable, Equatable {
    let id: Int
    let name: String
    let age: Int
    var avatarURL: String { "https://example.com/avatars/\(id).png" }
}

struct Post: Sendable, Equatable {
    let title: String
}

/// A user with more detail, made by async work (Swift6AndActors.md, Futures.md).
struct Profile: Sendable, Equatable {
    let user: User
    let bio: String
}

@Sendable func enrich(_ user: User) async throws -> Profile {
    Profile(user: user, bio: "")
}

struct Settings: Sendable {
    static let defaults = Settings()
}

struct Image: Sendable, Equatable {
    let bytes: [UInt8]
    static let placeholder = Image(bytes: [])
}

enum LoadError: Error, Equatable {
    case empty
    case notFound
    case cancelled
}

struct TransientError: Error {}

struct APIError: Error {
    init(wrapping error: any Error) {}
    init(underlying error: any Error) {}
}

let id = 1
let ids = [1, 2, 3]
let url = "https://example.com/report"
let urls = ["https://example.com/a", "https://example.com/b"]
let document = "words of a document"
let path = "/etc/app.conf"
let text = "https://example.com"
let host = "example.com"
let sizes = [Future(value: 1), Future(value: 2)]
let future = Future(value: 42)

func fetchUser(_ id: Int, cancellationToken: CancellationToken = .none) -> Future<User> {
    Future(value: User(id: id, name: "user \(id)", age: 30))
}

func fetchPosts(_ id: Int, cancellationToken: CancellationToken = .none) -> Future<[Post]> {
    Future(value: [])
}

func fetchSettings(_ id: Int) -> Future<Settings> { Future(value: Settings()) }
func loadSettings() -> Future<Settings> { Future(value: Settings()) }

func download(_ url: String, cancellationToken: CancellationToken = .none) -> Future<[UInt8]> {
    Future(value: Array(url.utf8))
}

func fetchImage(_ url: String) -> Future<Image> { Future(value: .placeholder) }
func render(_ bytes: [UInt8]) -> Image { Image(bytes: bytes) }
func render(_ url: String) throws -> Image { .placeholder }
func parse(_ text: String) throws -> [String] { text.split(separator: " ").map(String.init) }
func decode(_ data: Data) throws -> String { "" }
func sha256(of file: String) throws -> [UInt8] { [] }
func ping(_ host: String) -> Future<Int> { Future(value: 1) }
func importRecords() {}
func step() {}
func process<T>(_ item: T) {}
let items = [1, 2, 3]

/// Mirrors of the same content, for `race` and `firstCompleted`.
struct Mirror: Sendable {}
let mirrorA = Mirror()
let mirrorB = Mirror()
let primaryURL = "https://example.com/a"
let mirrorURL = "https://mirror.example.com/a"

func fetch(from mirror: Mirror, cancellationToken: CancellationToken = .none) -> Future<[UInt8]> {
    Future(value: [])
}

func fetch(_ url: String, cancellationToken: CancellationToken = .none) -> Future<[UInt8]> {
    Future(value: [])
}

/// A cache of users and of futures by key.
let cache = Cache()
final class Cache: Sendable {
    subscript(id: Int) -> User? { nil }
    func lookup(_ key: String) -> Future<String> { Future(value: key) }
}

// MARK: - Callback-based clients

/// A callback API, as older SDKs have them.
final class LegacyClient: Sendable {
    func load(_ url: String, completion: @escaping @Sendable ([UInt8]?, (any Error)?) -> Void) {}
    func get(_ url: URL, completion: @escaping @Sendable (Data?, (any Error)?) -> Void) {}
    func loadUser(id: Int, completion: @escaping @Sendable (Result<User, any Error>) -> Void) -> Call { Call() }
}
let legacy = LegacyClient()
let legacyClient = LegacyClient()

/// A call in flight that can be cancelled.
final class Call: Sendable {
    func cancel() {}
}

/// A cancellable task shaped like `URLSessionDataTask`.
final class DataTask: Sendable {
    func resume() {}
    func cancel() {}
}

// Not for the Integrations/ blocks (`--integrations`), whose `HTTPClient` is AsyncHTTPClient's.
#if !FUTURELIB_SNIPPETS_INTEGRATIONS
final class HTTPClient: Sendable {
    func dataTask(with url: String, completion: @escaping @Sendable ([UInt8]?, (any Error)?) -> Void) -> DataTask {
        DataTask()
    }
    func fetch(_ url: String) async throws -> [UInt8] { [] }
    func loadUser(id: Int, completion: @escaping @Sendable (Result<User, any Error>) -> Void) -> Call { Call() }
}
let client = HTTPClient()
#endif

// MARK: - Tokens and requests

let request = CancellationRequest()
let token = request.token
let shutdown = CancellationRequest()

final class Connection: Sendable {
    func close() {}
    func send<Message>(_ message: Message) async throws {}
    var readings: FutureStream<Reading> { StreamPromise<Reading>().stream }
}
let connection = Connection()

struct Request: Sendable {}

final class Socket: Sendable {
    func close() {}
    func read() throws -> [UInt8] { [] }
    func receiveMessages(handler: @escaping @Sendable (Result<String, any Error>) -> Void) {}
}
let socket = Socket()

// MARK: - Sensors and streams

struct Reading: Sendable {
    var value = 0.0
    static let unknown = Reading()
}

struct SensorError: Error {
    static let unavailable = SensorError()
    init() {}
    init(underlying: any Error) {}
}

struct Acceleration: Sendable {
    var x = 0.0
}

struct Location: Sendable {}
struct Coordinate: Sendable {}

struct Calibration: Sendable {
    var offset = 0.0
    static func load() throws -> Calibration { Calibration() }
}

/// A sensor with a stream of readings.
final class Sensor: Sendable {
    var readings: FutureStream<Reading> { StreamPromise<Reading>().stream }
    func startUpdates(_ callback: @escaping @Sendable (Int?, (any Error)?) -> Void) {}
    func stopUpdates() {}
    func report(_ value: Int) {}
}
let sensor = Sensor()

/// A value shared by threads (the guides' examples record what handlers saw in it).
final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { storage.withLock { body(&$0) } }
}

// MARK: - UI, logging

/// A label of a UI (stands in for UIKit's; set it on the main queue).
final class Label: @unchecked Sendable {  // Sendable: a stub; nothing here runs
    var text = ""
}
let label = Label()
let nameLabel = Label()

final class Spinner: @unchecked Sendable {  // Sendable: a stub; nothing here runs
    func start() {}
    func stop() {}
    func stopAnimating() {}
}
let spinner = Spinner()

struct Logger: Sendable {
    func debug(_ message: String) {}
    func warning(_ message: String) {}
    func error(_ message: String) {}
}
let logger = Logger()

func show<T>(_ value: T) {}
func store<T>(_ value: T) {}
func index<T>(_ value: T) {}
func log<T>(_ value: T) {}
func report(_ error: any Error) {}
func refreshList() {}

// MARK: - Configuration, computations

struct Config: Equatable, Sendable {
    var port = 8080
}

func loadConfig(_ text: String = "port=8080", cancellationToken: CancellationToken = .none) -> Future<Config> {
    Future(value: Config())
}

func sumOfSquares(upTo n: Int, cancellationToken: CancellationToken = .none) throws -> Int { n }
