/// What a stream hands to one subscriber: a result, or the end of its subscription.
@usableFromInline
enum StreamEvent<Value: Sendable>: Sendable {
    /// One result of the stream.
    case result(Result<Value, any Error>)
    /// The stream finished: no result follows.
    case finished
    /// The subscriber's token was cancelled: no result follows.
    case cancelled

    /// Whether nothing follows this event.
    @inlinable
    var isTerminal: Bool {
        if case .result = self { return false }
        return true
    }
}

/// The last `capacity` results of a stream, oldest first, in a ring that never grows past
/// `capacity` (`Int.max` means "keep everything").
@usableFromInline
struct RecentResults<Value: Sendable>: Sendable {
    @usableFromInline let capacity: Int
    @usableFromInline var storage: [Result<Value, any Error>] = []
    /// Index of the oldest result once `storage` is full.
    @usableFromInline var head = 0

    @inlinable
    init(capacity: Int) {
        self.capacity = capacity
    }

    @inlinable
    var isEmpty: Bool { storage.isEmpty }

    /// Appends `result`; returns the result it evicted, so the caller can drop it outside its lock.
    @inlinable
    mutating func append(_ result: Result<Value, any Error>) -> Result<Value, any Error>? {
        guard capacity > 0 else { return result }
        guard storage.count == capacity else {
            storage.append(result)
            return nil
        }
        let evicted = storage[head]
        storage[head] = result
        head = head + 1 == capacity ? 0 : head + 1
        return evicted
    }

    /// The kept results, oldest first.
    @inlinable
    var elements: [Result<Value, any Error>] {
        guard head > 0 else { return storage }
        return Array(storage[head...] + storage[..<head])
    }
}
