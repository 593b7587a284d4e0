import FutureLib
import Synchronization

// The small domain the guides' examples are written against: a user service, downloads and
// images. Each stub completes quickly on FutureLib's own pool and honours its token, so the
// examples can run as tests.

struct User: Sendable, Equatable {
    let id: Int
    let name: String
    let age: Int
    var avatarURL: String { "https://example.com/avatars/\(id).png" }
}

struct Image: Sendable, Equatable {
    let bytes: [UInt8]
    static let placeholder = Image(bytes: [])
}

struct Post: Sendable, Equatable {
    let title: String
}

enum LoadError: Error, Equatable {
    case empty
    case notFound
    case cancelled
}

/// A user with the given id, fetched on the `.default` pool.
func fetchUser(_ id: Int, cancellationToken: CancellationToken = .none) -> Future<User> {
    Future(cancellationToken: cancellationToken) {
        guard id >= 0 else { throw LoadError.notFound }
        return User(id: id, name: "user \(id)", age: 20 + id % 50)
    }
}

/// The posts of a user.
func fetchPosts(_ id: Int, cancellationToken: CancellationToken = .none) -> Future<[Post]> {
    Future(cancellationToken: cancellationToken) { [Post(title: "post of \(id)")] }
}

/// The bytes at `url`.
func download(_ url: String, cancellationToken: CancellationToken = .none) -> Future<[UInt8]> {
    Future(cancellationToken: cancellationToken) {
        guard !url.isEmpty else { throw LoadError.empty }
        return Array(url.utf8)
    }
}

/// Decodes downloaded bytes into an image.
func render(_ bytes: [UInt8]) -> Image {
    Image(bytes: bytes)
}

/// A completion-handler API, as older SDKs have them.
final class LegacyClient: Sendable {
    func load(_ url: String, completion: @escaping @Sendable ([UInt8]?, (any Error)?) -> Void) {
        DefaultExecutionContext().execute {
            url.isEmpty ? completion(nil, LoadError.empty) : completion(Array(url.utf8), nil)
        }
    }
}

/// A cancellable callback API shaped like `URLSessionDataTask`: `resume()` starts it, `cancel()`
/// stops it and calls the completion with ``LoadError/cancelled``. The completion runs once.
final class DataTask: Sendable {
    private let url: String
    private let completion: @Sendable ([UInt8]?, (any Error)?) -> Void
    private let finished = Atomic(false)

    init(url: String, completion: @escaping @Sendable ([UInt8]?, (any Error)?) -> Void) {
        self.url = url
        self.completion = completion
    }

    func resume() {
        DefaultExecutionContext().execute { [self] in
            guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
            completion(Array(url.utf8), nil)
        }
    }

    func cancel() {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        completion(nil, LoadError.cancelled)
    }
}

final class HTTPClient: Sendable {
    func dataTask(with url: String, completion: @escaping @Sendable ([UInt8]?, (any Error)?) -> Void) -> DataTask {
        DataTask(url: url, completion: completion)
    }
}
