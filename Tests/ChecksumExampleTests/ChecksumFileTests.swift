import Cancellation
import ChecksumExample
import Foundation
import TestSupport
import Testing

/// A library that depends on `Cancellation` only takes a token, stops between chunks, and closes
/// its file descriptor from the token's handler.
@Suite(.timeLimit(.minutes(HangLimit.minutes(3))))
struct ChecksumFileTests {
    /// A temporary file of `size` bytes, deleted by `remove()`.
    struct TemporaryFile {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("ChecksumFileTests-\(UUID().uuidString)").path

        init(size: Int) throws {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }

        func remove() {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// FNV-1a 64 computed in memory, to compare with the chunked one.
    func fnv1a(_ data: Data) -> UInt64 {
        data.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    @Test("without cancellation: the checksum of the whole file, and the file is closed")
    func checksumOfWholeFile() throws {
        let temporary = try TemporaryFile(size: 10_000)
        defer { temporary.remove() }
        let file = try ChecksumFile(path: temporary.path)
        let checksum = try file.checksum(chunkSize: 1024, cancellationToken: CancellationRequest().token)
        #expect(checksum == fnv1a(try Data(contentsOf: URL(fileURLWithPath: temporary.path))))
        #expect(!file.isOpen)
    }

    @Test("cancelled mid-file: the handler closes the descriptor at once, the next chunk is not read")
    func cancelledMidFile() throws {
        let temporary = try TemporaryFile(size: 64 * 1024)
        defer { temporary.remove() }
        let file = try ChecksumFile(path: temporary.path)
        let request = CancellationRequest()
        let lastRead = Locked(0)
        #expect(throws: CancellationError.self) {
            try file.checksum(chunkSize: 1024, cancellationToken: request.token) { bytesRead in
                lastRead.withLock { $0 = bytesRead }
                if bytesRead == 4096 {
                    request.cancel()
                    #expect(!file.isOpen)  // closed by `onCancel`, before `cancel()` returned
                }
            }
        }
        #expect(lastRead.value == 4096)
        #expect(!file.isOpen)
    }

    @Test("cancelled from another thread while reading: CancellationError, descriptor closed")
    func cancelledFromAnotherThread() async throws {
        let temporary = try TemporaryFile(size: 64 * 1024)
        defer { temporary.remove() }
        let file = try ChecksumFile(path: temporary.path)
        let request = CancellationRequest()
        let started = Signal()
        let reader = Task {
            await onDedicatedThread { () -> Result<UInt64, any Error> in
                Result {
                    try file.checksum(chunkSize: 1024, cancellationToken: request.token) { _ in
                        started.fire()
                        _ = request.token.wait(timeout: .seconds(30))  // a slow consumer
                    }
                }
            }
        }
        await onDedicatedThread { started.wait() }
        request.cancel()  // closes the descriptor from this thread while the reader is busy
        #expect(!file.isOpen)
        let result = await reader.value
        #expect(throws: CancellationError.self) { try result.get() }
    }

    @Test("an already cancelled token reads nothing")
    func alreadyCancelled() throws {
        let temporary = try TemporaryFile(size: 100)
        defer { temporary.remove() }
        let file = try ChecksumFile(path: temporary.path)
        let chunks = Counter()
        #expect(throws: CancellationError.self) {
            try file.checksum(cancellationToken: .cancelled) { _ in _ = chunks.increment() }
        }
        #expect(chunks.value == 0)
        #expect(!file.isOpen)
    }

    @Test("close() from another thread during reads never loses the descriptor", arguments: 0..<50)
    func closeRacesReads(_ iteration: Int) async throws {
        let temporary = try TemporaryFile(size: 16 * 1024)
        defer { temporary.remove() }
        let file = try ChecksumFile(path: temporary.path)
        await onThreads(2) { index in
            if index == 0 {
                _ = try? file.checksum(chunkSize: 512)
            } else {
                file.close()
            }
        }
        #expect(!file.isOpen)
    }
}
