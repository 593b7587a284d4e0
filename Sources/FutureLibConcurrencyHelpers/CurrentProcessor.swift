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
    /// the thread's `rseq` area: no system call. nil elsewhere, or when the C library lacks it.
    package static let schedGetCPU: (@convention(c) () -> Int32)? = {
        #if canImport(Glibc)
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "sched_getcpu") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) () -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// The number of processors this process can use, at least 1: what sizes FutureLib's worker
    /// pool (and whether its threads spin at all) and the number of registration stripes.
    ///
    /// On Linux the smallest of the processors online (`sysconf`), the processors in the process's
    /// affinity mask (`sched_getaffinity`: `taskset`, a cpuset) and the cgroup's CPU quota rounded
    /// up (`cpu.max`, or cgroup v1's `cpu.cfs_quota_us`: `docker --cpus`, a Kubernetes CPU limit).
    /// In a container the processors online are the host's: a process allowed 1 CPU on a 64-core
    /// host would otherwise size its pool for 64 and spin as if processors were free (SwiftNIO's
    /// `System.coreCount`, .NET's `Environment.ProcessorCount` and Go's runtime read the same
    /// limits). Elsewhere the processors online. Read once, at first use: a limit changed later is
    /// not seen.
    package static let count: Int = {
        #if canImport(Glibc) || canImport(Musl)
        available(
            online: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            affinity: processorsInAffinityMask(),
            quota: cgroupQuota()
        )
        #elseif canImport(Darwin)
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        4
        #endif
    }()

    /// The smallest of the limits that are known and positive; 1 if none is.
    package static func available(online: Int, affinity: Int?, quota: Int?) -> Int {
        [online, affinity, quota].compactMap { $0 }.filter { $0 > 0 }.min() ?? 1
    }

    /// The processors that a cgroup v2 `cpu.max` file's text ("150000 100000": quota and period
    /// in microseconds) allows, rounded up; nil for no limit ("max 100000") or text it cannot read.
    package static func quota(cpuMax: String) -> Int? {
        let fields = cpuMax.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let quota = Int(fields[0]), let period = Int(fields[1]) else { return nil }
        return processors(quota: quota, period: period)
    }

    /// The processors that cgroup v1's `cpu.cfs_quota_us` and `cpu.cfs_period_us` files' texts
    /// allow, rounded up; nil for no limit ("-1") or text it cannot read. Without a period, the
    /// kernel's default (100 ms).
    package static func quota(cfsQuota: String, cfsPeriod: String?) -> Int? {
        let quotaFields = cfsQuota.split(whereSeparator: \.isWhitespace)
        guard quotaFields.count == 1, let quota = Int(quotaFields[0]) else { return nil }
        guard let cfsPeriod else { return processors(quota: quota, period: 100_000) }
        let periodFields = cfsPeriod.split(whereSeparator: \.isWhitespace)
        guard periodFields.count == 1, let period = Int(periodFields[0]) else { return nil }
        return processors(quota: quota, period: period)
    }

    /// `quota / period` rounded up (1.5 processors' worth of time is 2 threads' work); nil unless both are positive.
    private static func processors(quota: Int, period: Int) -> Int? {
        guard quota > 0, period > 0 else { return nil }
        return quota / period + (quota % period == 0 ? 0 : 1)
    }

    /// The number of processors in an affinity mask (`cpu_set_t`'s bits, which Swift's Glibc
    /// module does not declare, nor `CPU_COUNT`).
    package static func processors(inMask mask: [UInt64]) -> Int {
        mask.reduce(0) { $0 + $1.nonzeroBitCount }
    }

    /// The CPU quota of the process's cgroup as its root is mounted in a container (cgroup v2, else
    /// v1), in processors; nil when there is none or no file to read.
    package static func cgroupQuota() -> Int? {
        if let cpuMax = contents(ofFile: "/sys/fs/cgroup/cpu.max") { return quota(cpuMax: cpuMax) }
        guard let cfsQuota = contents(ofFile: "/sys/fs/cgroup/cpu/cpu.cfs_quota_us") else { return nil }
        return quota(cfsQuota: cfsQuota, cfsPeriod: contents(ofFile: "/sys/fs/cgroup/cpu/cpu.cfs_period_us"))
    }

    /// The start of a small file (a cgroup's), nil if it cannot be opened.
    private static func contents(ofFile path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes = [UInt8](repeating: 0, count: 128)
        let length = bytes.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        return String(decoding: bytes[..<length], as: UTF8.self)
    }

    /// The processors in the process's affinity mask (glibc's `sched_getaffinity`, which Swift's
    /// Glibc module does not declare, looked up like `sched_getcpu`); nil where there is none.
    package static func processorsInAffinityMask() -> Int? {
        #if canImport(Glibc)
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "sched_getaffinity") else { return nil }
        typealias GetAffinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer?) -> Int32
        let getAffinity = unsafeBitCast(symbol, to: GetAffinity.self)
        // 1,024 processors (glibc's `cpu_set_t`) first; the kernel refuses a mask smaller than its own (EINVAL).
        var words = 16
        while words <= 16_384 {
            var mask = [UInt64](repeating: 0, count: words)
            let result = mask.withUnsafeMutableBytes { getAffinity(0, $0.count, $0.baseAddress) }
            if result == 0 { return processors(inMask: mask) }
            guard errno == EINVAL else { return nil }
            words *= 2
        }
        return nil
        #else
        return nil
        #endif
    }

    /// The calling thread's processor number (from `schedGetCPU`, passed in so that the caller reads
    /// the global once), or where there is none a hash of the thread's identity: any number, the
    /// caller masks it.
    @inlinable
    package static func index(using schedGetCPU: (@convention(c) () -> Int32)?) -> UInt {
        if let schedGetCPU { return UInt(truncatingIfNeeded: schedGetCPU()) }
        // A multiplicative hash: thread identities are aligned addresses; the top bits are the well mixed ones.
        return UInt(truncatingIfNeeded: (UInt64(ThreadIdentity.current.raw) &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }
}
