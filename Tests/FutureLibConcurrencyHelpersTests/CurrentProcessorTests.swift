import FutureLibConcurrencyHelpers
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The processor count FutureLib sizes its worker pool and registration stripes by
/// (`FutureLibConcurrencyHelpers/CurrentProcessor.swift`): the processors online, capped by the affinity mask and the
/// cgroup's CPU quota (a container's limit). The time limit is the suites' hang limit: these tests are quick, but under
/// a sanitizer they may wait a long time for a cooperative thread while other suites run.
@Suite(.timeLimit(.minutes(HangLimit.minutes(1))))
struct CurrentProcessorTests {
    @Test func `a cgroup v2 quota is rounded up to whole processors`() {
        #expect(CurrentProcessor.quota(cpuMax: "200000 100000\n") == 2)
        #expect(CurrentProcessor.quota(cpuMax: "150000 100000\n") == 2)
        #expect(CurrentProcessor.quota(cpuMax: "50000 100000\n") == 1)
        #expect(CurrentProcessor.quota(cpuMax: "100000 100000") == 1)
        #expect(CurrentProcessor.quota(cpuMax: "6400000 100000\n") == 64)
    }

    @Test func `a cgroup v2 file without a limit, or unreadable, sets none`() {
        #expect(CurrentProcessor.quota(cpuMax: "max 100000\n") == nil)
        #expect(CurrentProcessor.quota(cpuMax: "") == nil)
        #expect(CurrentProcessor.quota(cpuMax: "\n") == nil)
        #expect(CurrentProcessor.quota(cpuMax: "garbage") == nil)
        #expect(CurrentProcessor.quota(cpuMax: "150000") == nil)
        #expect(CurrentProcessor.quota(cpuMax: "150000 100000 7") == nil)
        #expect(CurrentProcessor.quota(cpuMax: "0 100000") == nil)
        #expect(CurrentProcessor.quota(cpuMax: "150000 0") == nil)
        #expect(CurrentProcessor.quota(cpuMax: "-150000 100000") == nil)
    }

    @Test func `a cgroup v1 quota is rounded up, with the kernel's default period when there is no period file`() {
        #expect(CurrentProcessor.quota(cfsQuota: "200000\n", cfsPeriod: "100000\n") == 2)
        #expect(CurrentProcessor.quota(cfsQuota: "150000\n", cfsPeriod: "100000\n") == 2)
        #expect(CurrentProcessor.quota(cfsQuota: "50000\n", cfsPeriod: "100000\n") == 1)
        #expect(CurrentProcessor.quota(cfsQuota: "150000\n", cfsPeriod: "50000\n") == 3)
        #expect(CurrentProcessor.quota(cfsQuota: "150000\n", cfsPeriod: nil) == 2)
    }

    @Test func `a cgroup v1 quota of -1, or unreadable, sets none`() {
        #expect(CurrentProcessor.quota(cfsQuota: "-1\n", cfsPeriod: "100000\n") == nil)
        #expect(CurrentProcessor.quota(cfsQuota: "", cfsPeriod: "100000\n") == nil)
        #expect(CurrentProcessor.quota(cfsQuota: "garbage", cfsPeriod: "100000\n") == nil)
        #expect(CurrentProcessor.quota(cfsQuota: "150000\n", cfsPeriod: "garbage") == nil)
        #expect(CurrentProcessor.quota(cfsQuota: "150000\n", cfsPeriod: "0\n") == nil)
    }

    @Test func `an affinity mask counts its set bits`() {
        #expect(CurrentProcessor.processors(inMask: []) == 0)
        #expect(CurrentProcessor.processors(inMask: [0b1, 0, 0]) == 1)
        #expect(CurrentProcessor.processors(inMask: [0b1011, 0, 1 << 63]) == 4)
        #expect(CurrentProcessor.processors(inMask: [.max, .max]) == 128)
    }

    @Test func `the count is the smallest known limit, and at least 1`() {
        #expect(CurrentProcessor.available(online: 64, affinity: nil, quota: nil) == 64)
        #expect(CurrentProcessor.available(online: 64, affinity: 4, quota: nil) == 4)
        #expect(CurrentProcessor.available(online: 64, affinity: 4, quota: 2) == 2)
        #expect(CurrentProcessor.available(online: 64, affinity: 1, quota: 2) == 1)
        #expect(CurrentProcessor.available(online: 8, affinity: 8, quota: 64) == 8)
        #expect(CurrentProcessor.available(online: -1, affinity: 3, quota: nil) == 3)
        #expect(CurrentProcessor.available(online: -1, affinity: 0, quota: nil) == 1)
    }

    @Test func `the count is at least 1 and at most the processors online`() {
        #expect(CurrentProcessor.count >= 1)
        #if canImport(Glibc) || canImport(Darwin)
        #expect(CurrentProcessor.count <= max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #endif
    }

    @Test func `the count is at most the cgroup's quota`() {
        if let quota = CurrentProcessor.cgroupQuota() { #expect(CurrentProcessor.count <= quota) }
    }

    // `make test-wide` runs this suite with its LD_PRELOAD shim (Scripts/wide-machine/processors.c):
    // the count must then be the processors the shim reports, else that run is not as wide as it
    // says (a CPU quota the shim no longer hides would cap it, say).
    @Test func `under the wide-machine shim the count is the processors it reports`() throws {
        #if canImport(Glibc)
        guard let preload = getenv("LD_PRELOAD").map({ String(cString: $0) }),
            preload.contains("libprocessors"),
            let reported = getenv("WIDE_MACHINE_PROCESSORS").flatMap({ Int(String(cString: $0)) })
        else { return }
        #expect(CurrentProcessor.count == reported)
        #endif
    }

    // Run under `taskset -c 0`, the mask holds one processor, and so the count is 1.
    @Test func `the count is at most the processors in the process's affinity mask`() throws {
        #if canImport(Glibc)
        // Looked up here on its own (Swift's Glibc module does not declare it), with a mask wide
        // enough for any machine this runs on.
        let process = try #require(dlopen(nil, RTLD_NOW))
        let symbol = try #require(dlsym(process, "sched_getaffinity"))
        typealias GetAffinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer?) -> Int32
        let getAffinity = unsafeBitCast(symbol, to: GetAffinity.self)
        var mask = [UInt8](repeating: 0, count: 8_192)
        let result = mask.withUnsafeMutableBytes { getAffinity(0, $0.count, $0.baseAddress) }
        try #require(result == 0)
        let allowed = mask.reduce(0) { $0 + $1.nonzeroBitCount }
        #expect(CurrentProcessor.count <= allowed)
        #expect(CurrentProcessor.processorsInAffinityMask() == allowed)
        #endif
    }
}
