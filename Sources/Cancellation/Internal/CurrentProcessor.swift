#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif os(Windows)
import WinSDK
#endif

/// The processor the calling thread runs on, to pick a striped request's stripe
/// (``RegistrationStripes``): two threads running at the same moment run on different processors,
/// so they take different stripes' locks, whatever their identities hash to.
///
/// A hint only: the thread may move to another processor at any moment; the stripes' locks keep
/// every outcome correct, a move only costs a shared cache line now and then.
package enum CurrentProcessor {
    /// glibc's `sched_getcpu()`, which Swift's Glibc module does not declare (it is a `_GNU_SOURCE`
    /// function), looked up once. Since glibc 2.35 it reads the number that the kernel keeps in
    /// the thread's `rseq` area: about 1 ns, no system call (measured here: 10.8 → 11.6 ns per
    /// lock/unlock pair with it). nil elsewhere, or when the C library lacks it.
    static let schedGetCPU: (@convention(c) () -> Int32)? = {
        #if canImport(Glibc)
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "sched_getcpu") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) () -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// The number of processors online, at least 1 (also what sizes FutureLib's worker pool).
    package static var count: Int {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        4
        #endif
    }

    /// The calling thread's processor number (from `schedGetCPU`, passed in so that the caller reads
    /// the global once), or where there is none a hash of the thread's identity: any number, the
    /// caller masks it.
    @inline(__always)
    static func index(using schedGetCPU: (@convention(c) () -> Int32)?) -> UInt {
        if let schedGetCPU { return UInt(truncatingIfNeeded: schedGetCPU()) }
        // A multiplicative hash: thread identities are aligned addresses; the top bits are the well mixed ones.
        return UInt(truncatingIfNeeded: (UInt64(ThreadIdentity.current.raw) &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }
}
