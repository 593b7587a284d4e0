#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The stack of Apple's secondary threads: what the depth tests run on.
package let smallStackSize = 512 << 10

/// Runs `body` on a new pthread whose stack is `stackSize` bytes, and suspends (without blocking a
/// cooperative thread) until it returns: a test that overflows that stack crashes there, which is what
/// the depth tests guard against. One such job (see ``HeavyGate``) at a time in the process.
package func onSmallStack(stackSize: Int = smallStackSize, _ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let work = SmallStackWork {
            HeavyGate.shared.holding(body)
            continuation.resume()
        }
        let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
        pthread_attr_init(attributes)
        defer {
            pthread_attr_destroy(attributes)
            attributes.deallocate()
        }
        pthread_attr_setstacksize(attributes, stackSize)
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let status = pthread_create(
            &thread,
            attributes,
            { argument in
                #if canImport(Darwin)
                Unmanaged<SmallStackWork>.fromOpaque(argument).takeRetainedValue().body()
                #else
                Unmanaged<SmallStackWork>.fromOpaque(argument!).takeRetainedValue().body()
                #endif
                return nil
            },
            Unmanaged.passRetained(work).toOpaque()
        )
        precondition(status == 0, "pthread_create failed: \(status)")
        #if canImport(Darwin)
        pthread_detach(thread!)
        #else
        pthread_detach(thread)
        #endif
    }
}

private final class SmallStackWork: Sendable {
    let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }
}
