// An example of a library that takes cancellation tokens without knowing about futures: it
// depends on the `Cancellation` product only. It checks the token between chunks and registers
// `onCancel` to close its file descriptor at once, even while its caller is busy elsewhere.
public import Cancellation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file opened to compute its checksum, in chunks, stopping when a token is cancelled.
///
/// ```swift
/// let file = try ChecksumFile(path: "/tmp/big.iso")
/// let deadline = CancellationRequest(cancelAfter: .seconds(5))
/// let checksum = try file.checksum(cancellationToken: deadline.token)  // or CancellationError
/// ```
///
/// ### Cancellation
/// ``checksum(chunkSize:cancellationToken:onChunk:)`` checks the token before every chunk and
/// registers a handler on it that closes the file descriptor as soon as the token is cancelled,
/// on the cancelling thread: at once when no read is in progress, otherwise right after that read
/// (never under it). The handler is unregistered when the checksum returns.
///
/// ### Threads
/// One thread computes the checksum; ``close()`` and the token may be used from any thread.
public final class ChecksumFile: Sendable {
    private let descriptor: Int32
    /// `idle`, `reading`, `closeRequested` (while reading) or `closed`; see `Phase`.
    private let phase = Atomic<Int>(Phase.idle)

    private enum Phase {
        static let idle = 0
        static let reading = 1
        static let closeRequested = 2
        static let closed = 3
    }

    /// Opens the file at `path` for reading.
    ///
    /// ```swift
    /// let file = try ChecksumFile(path: "/etc/hosts")
    /// ```
    ///
    /// - Parameter path: The file to open.
    /// - Throws: ``ChecksumError/cannotOpen(path:errno:)`` when `open` fails.
    public init(path: String) throws {
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw ChecksumError.cannotOpen(path: path, errno: errno) }
    }

    deinit {
        if phase.load(ordering: .relaxed) != Phase.closed { _ = Self.closeDescriptor(descriptor) }
    }

    /// Whether the file descriptor is still open (no ``close()`` or cancellation has closed it).
    ///
    /// ```swift
    /// request.cancel()
    /// assert(!file.isOpen)  // the token's handler closed it, before `cancel()` returned
    /// ```
    public var isOpen: Bool {
        let current = phase.load(ordering: .acquiring)
        return current == Phase.idle || current == Phase.reading
    }

    /// Closes the file descriptor now, or right after the read in progress; idempotent.
    ///
    /// ```swift
    /// file.close()
    /// ```
    ///
    /// A checksum in progress then stops with `CancellationError`.
    public func close() {
        while true {
            switch phase.load(ordering: .acquiring) {
            case Phase.idle:
                // acquiringAndReleasing: the last read happens-before the close.
                if phase.compareExchange(
                    expected: Phase.idle,
                    desired: Phase.closed,
                    ordering: .acquiringAndReleasing
                ).exchanged {
                    _ = Self.closeDescriptor(descriptor)
                    return
                }
            case Phase.reading:
                // The reader closes it when its read returns.
                if phase.compareExchange(
                    expected: Phase.reading,
                    desired: Phase.closeRequested,
                    ordering: .acquiringAndReleasing
                ).exchanged {
                    return
                }
            default:
                return
            }
        }
    }

    /// Reads the file from its current offset to the end and returns its FNV-1a 64-bit
    /// checksum, then closes the file.
    ///
    /// ```swift
    /// let request = CancellationRequest(cancelAfter: .seconds(2))
    /// let checksum = try file.checksum(cancellationToken: request.token) { bytesRead in
    ///     print("\(bytesRead) bytes")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - chunkSize: How many bytes to read at a time.
    ///   - cancellationToken: Checked before every chunk; cancelling it closes the file.
    ///   - onChunk: Called on the calling thread after each chunk with the bytes read so far.
    /// - Returns: The FNV-1a 64-bit checksum of the bytes read.
    /// - Throws: `CancellationError` when the token was cancelled or the file closed before the
    ///   end; ``ChecksumError/readFailed(errno:)`` when `read` fails.
    public func checksum(
        chunkSize: Int = 64 * 1024,
        cancellationToken: CancellationToken = .none,
        onChunk: (_ bytesRead: Int) -> Void = { _ in }
    ) throws -> UInt64 {
        precondition(chunkSize > 0, "chunkSize must be positive")
        let registration = cancellationToken.onCancel { [self] in close() }
        defer {
            registration.unregister()
            close()
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var total = 0
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        while true {
            try cancellationToken.checkCancellation()
            let count = try readChunk(into: &buffer)
            if count == 0 { return hash }
            for byte in buffer[0..<count] {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
            total += count
            onChunk(total)
        }
    }

    /// Reads one chunk unless the file is closed; closes it afterwards if asked to meanwhile.
    private func readChunk(into buffer: inout [UInt8]) throws -> Int {
        guard
            phase.compareExchange(expected: Phase.idle, desired: Phase.reading, ordering: .acquiringAndReleasing)
                .exchanged
        else { throw CancellationError() }
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        let failure = errno
        guard
            phase.compareExchange(expected: Phase.reading, desired: Phase.idle, ordering: .acquiringAndReleasing)
                .exchanged
        else {
            phase.store(Phase.closed, ordering: .releasing)  // only `closeRequested` gets here
            _ = Self.closeDescriptor(descriptor)
            throw CancellationError()
        }
        guard count >= 0 else { throw ChecksumError.readFailed(errno: failure) }
        return count
    }

    private static func closeDescriptor(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(descriptor)
        #else
        Darwin.close(descriptor)
        #endif
    }
}

/// Why ``ChecksumFile`` failed, other than cancellation.
public enum ChecksumError: Error, Equatable, Sendable {
    /// `open` failed with `errno`.
    case cannotOpen(path: String, errno: Int32)
    /// `read` failed with `errno`.
    case readFailed(errno: Int32)
}
