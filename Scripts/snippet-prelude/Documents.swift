// Stubs for the blocks of one document only, where a name means something else than in
// Prelude.swift (`promise` is a `Promise<String>` in Promise.swift, a `StreamPromise<Int>` in
// StreamPromise.swift). Each document's blocks are compiled inside an enum named after its path,
// so its static members here are what those blocks see first. Keep the documents in path order.

import ChecksumExample
import Dispatch
import Foundation
import FutureLib
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - Documentation/

extension `Documentation/Cancellation.md` {
    struct Response: Sendable {}
    static func respond(to request: Request, cancellationToken: CancellationToken) async throws -> Response {
        Response()
    }
    static func fetchQuote(_ symbol: String, cancellationToken: CancellationToken) -> Future<Double> {
        Future(value: 1)
    }
    struct Order: Sendable {}
    static func reserveStock(
        _ order: Order,
        within budget: Duration,
        cancellationToken: CancellationToken
    )
        -> Future<Int>
    { Future(value: 1) }
}

extension `Documentation/GettingStarted.md` {
    static let count = Future(value: 3)  // from the block before
}

extension `Documentation/Migration.md` {
    static let ui = DispatchQueue.main

    enum PhoneError: Error {
        case noAnswer
    }

    static func parsePort(_ text: String) throws -> Int { 8080 }
    static func asyncRequest(_ completion: @escaping @Sendable (Int?, (any Error)?) -> Void) {}
    static func anotherAsyncRequest(_ value: Int) -> Future<String> { Future(value: "\(value)") }
    static func get(_ url: String, with client: HTTPClient, cancellationToken: CancellationToken) -> Future<[UInt8]> {
        Future(value: [])
    }
    static func decode(from bytes: [UInt8]) throws -> String { "" }
    static func present(text: String) {}
    static func present(error: any Error) {}
    static func store(text: String) {}
    static func phoneNumber() -> Future<Int> { Future(value: 5_550_100) }
    static func call(_ number: Int) -> Future<String> { Future(value: "an earful") }
    static func fetchUserAsync(_ id: Int, cancellationToken: CancellationToken) -> Future<User> { fetchUser(id) }
}

extension `Documentation/Testing.md` {
    /// As in Tests/FutureLibTests/TestingGuideClockTests.swift.
    final class FakeServer: Sendable {
        let clock: ManualClock
        let delay: Duration
        private let starts = Mutex<[Duration]>([])

        init(clock: ManualClock, answeringAfter delay: Duration) {
            self.clock = clock
            self.delay = delay
        }

        var startTimes: [Duration] { starts.withLock { $0 } }

        func fetch(_ token: CancellationToken) -> Future<Config> {
            starts.withLock { $0.append(clock.now) }
            return Future(value: Config(port: 80), after: delay, clock: clock, cancellationToken: token)
        }
    }
}

// MARK: - Sources/Cancellation

extension `Sources/Cancellation/CancellationRegistration.swift` {
    final class Buffer: Sendable {
        func discard() {}
        func deallocate() {}
    }
    static let buffer = Buffer()
}

extension `Sources/Cancellation/CancellationRequest+Linked.swift` {
    struct Backend: Sendable {
        func send(_ request: Request, cancellationToken: CancellationToken) async throws {}
    }
    static let backend = Backend()
}

extension `Sources/Cancellation/CancellationRequest.swift` {
    struct Button: Sendable {
        func onTap(_ action: @escaping @Sendable () -> Void) {}
    }
    static let cancelButton = Button()
    static func startDownload(_ url: String, cancellationToken: CancellationToken) -> Future<[UInt8]> {
        download(url, cancellationToken: cancellationToken)
    }
}

extension `Sources/Cancellation/CancellationToken+Wait.swift` {
    struct Server: Sendable {
        func stop() async {}
    }
    static let server = Server()
}

extension `Sources/Cancellation/TaskCancellation+Bridge.swift` {
    struct ImageLoader: Sendable {
        func load(_ url: URL, cancellationToken: CancellationToken) -> Future<Image> { Future(value: .placeholder) }
    }
    static let imageLoader = ImageLoader()
}

// MARK: - Sources/ChecksumExample

extension `Sources/ChecksumExample/ChecksumFile.swift` {
    static let file = try! ChecksumFile(path: "/etc/hosts")
}

// MARK: - Sources/FutureLib

extension `Sources/FutureLib/ExecutionContext+Default.swift` {
    static let bigFile = "big.txt"
}

extension `Sources/FutureLib/ExecutionContext+Limited.swift` {
    static let context = LimitedExecutionContext(maxConcurrency: 4)
}

extension `Sources/FutureLib/Future+Adapters.swift` {
    static let session = URLSession.shared
    static let url = URL(string: "https://example.com")!

    struct Locator: Sendable {
        func requestOnce(_ completion: @escaping @Sendable (Coordinate) -> Void) {}
    }
    static let locator = Locator()

    struct Record: Sendable {}
    struct Store: Sendable {
        func save(_ record: Record, completion: @escaping @Sendable ((any Error)?) -> Void) {}
    }
    static let record = Record()
    static let store = Store()
}

extension `Sources/FutureLib/Future+Async.swift` {
    static func loadConfig() -> Future<Config> { Future(value: Config()) }
}

extension `Sources/FutureLib/Future+Blocking.swift` {
    static func loadConfig(_ path: String) -> Future<Config> { Future(value: Config()) }
}

extension `Sources/FutureLib/Future+Callbacks.swift` {
    static let download = Future(value: [UInt8]())
    static let user = fetchUser(1)
    static let upload = Future(value: ())
}

extension `Sources/FutureLib/Future+Transform.swift` {
    struct Metrics: Sendable {
        func record<T>(_ result: Result<T, any Error>) {}
    }
    static let metrics = Metrics()
}

extension `Sources/FutureLib/Future.swift` {
    static let future = fetchUser(1)
    static let file = "/tmp/big.iso"
    static let url = URL(string: "https://example.com")!
}

extension `Sources/FutureLib/Promise.swift` {
    static let promise = Promise<String>()
    static let response = "200 OK"
    static let data = Data()
    static let key = "user:1"
    static let value = "late"
}

extension `Sources/FutureLib/Sequence+Futures.swift` {
    static let uploads = [Future(value: 1), Future(value: 2)]
}

// MARK: - Sources/FutureLib/Stream

extension `Sources/FutureLib/Stream/Future+Stream.swift` {
    struct Device: Sendable {}
    static let device = Device()
    static func connect(to device: Device) -> Future<Connection> { Future(value: Connection()) }
    static func fetchLastReading() -> Future<Reading> { Future(value: Reading()) }
}

extension `Sources/FutureLib/Stream/FutureStream+Adapters.swift` {
    static let stop = CancellationRequest()

    final class LocationManager: Sendable {
        func startUpdates(_ callback: @escaping @Sendable (Location?, (any Error)?) -> Void) {}
        func stopUpdates() {}
    }
    static let manager = LocationManager()

    struct Battery: Sendable {
        func observeLevel(handler: @escaping @Sendable (Double) -> Void) {}
    }
    static let battery = Battery()

    struct Document: Sendable {
        func observeAutosaves(handler: @escaping @Sendable ((any Error)?) -> Void) {}
    }
    static let document = Document()

    struct Metronome: Sendable {
        func start(_ tick: @escaping @Sendable (Int) -> Void) {}
        func stop() {}
    }
    static let metronome = Metronome()
}

/// The compass of FutureStream+Adapters.swift's `extension Compass` (an extension is compiled at
/// file scope, outside the document's namespace).
final class Compass: Sendable {
    func startUpdates(handler: @escaping @Sendable (Double?, (any Error)?) -> Void) {}
}

extension `Sources/FutureLib/Stream/FutureStream+Async.swift` {
    struct Frame: Sendable {}
    struct Camera: Sendable {
        var frames: FutureStream<Frame> { StreamPromise<Frame>().stream }
    }
    static let camera = Camera()
    static func render(_ frame: Frame) {}
    static let locations = StreamPromise<Location>().stream
    static let log = StreamPromise<String>().stream
    static func archive(_ line: String) {}
    static let readings = StreamPromise<Reading>().stream
    static func plot(_ reading: Reading) {}
    static func note(_ error: any Error) {}
    static let promise = StreamPromise<Int>()
    static let stream = StreamPromise<Int>().stream

    struct File: Sendable {
        struct Bytes: Sendable {
            var lines: AsyncStream<String> { AsyncStream { $0.finish() } }
        }
        var bytes: Bytes { Bytes() }
    }
    static let file = File()
}

extension `Sources/FutureLib/Stream/FutureStream+Callbacks.swift` {
    final class MapView: @unchecked Sendable {  // Sendable: a stub; nothing here runs
        var center = Location()
    }
    final class Needle: @unchecked Sendable {  // Sendable: a stub; nothing here runs
        var angle = 0.0
    }
    static let locations = StreamPromise<Location>().stream
    static let map = MapView()
    static let accelerations = StreamPromise<Acceleration>().stream
    static let needle = Needle()
    static let downloads = StreamPromise<Int>().stream
}

extension `Sources/FutureLib/Stream/FutureStream+Map.swift` {
    struct Heading: Sendable {
        var magneticHeading = 0.0
    }
    struct Device: Sendable {
        var readings: FutureStream<Reading> { StreamPromise<Reading>().stream }
    }
    static let compass = StreamPromise<Heading>().stream
    static let userIDs = StreamPromise<Int>().stream
    static let connectedDevices = StreamPromise<Device>().stream
    static let rssiReadings = StreamPromise<Int>().stream
    static let readings = StreamPromise<Reading>().stream
}

extension `Sources/FutureLib/Stream/FutureStream+Recover.swift` {
    static let liveQuotes = StreamPromise<Double>().stream
    static func fetchLastKnownQuote() -> Future<Double> { Future(value: 1) }
    static let liveSensor = Sensor()
    static let backupSensor = Sensor()
}

extension `Sources/FutureLib/Stream/StreamPromise.swift` {
    static let promise = StreamPromise<Int>(capacity: 5)
    static let reading = 21
    static let line = "42"
    static func parse(_ line: String) throws -> Int { 42 }
    static func fetchLatestReading() -> Future<Int> { Future(value: 21) }
    static let indoorSensor = Sensor().readings
    static let outdoorSensor = Sensor().readings
}

// MARK: - Sources/FutureLibFoundation

extension `Sources/FutureLibFoundation/FutureLibFoundation.docc/FutureLibFoundation.md` {
    static let url = URL(string: "https://example.com")!
}

extension `Sources/FutureLibFoundation/URLSession+Futures.swift` {
    static let url = URL(string: "https://example.com")!
    static let session = URLSession.shared
}
