// Scenarios of the combinators over many futures with inputs still pending (issue 27's measurements):
//
//   futurelib-sequence-pending          sequence() of 1,000 pending futures, then all completed (one operation):
//                                          the cost of the continuation each pending input holds
//   futurelib-first-completed           firstCompleted() of 2 futures, one completed later and one pending for
//                                          the whole run (one operation): the server pattern, a request raced
//                                          against a long-lived shutdown future
//   soak-first-completed                not for valgrind: `count` firstCompleted() calls against one long-lived
//                                          pending future; prints the resident set before and after, and how many
//                                          continuations wait on the long-lived future at the end

import FutureLib
import Glibc

func futureLibSequencePending(_ count: Int) {
    for _ in 0..<count {
        let promises = (0..<1_000).map { _ in Promise<Int>() }
        promises.map(\.future).sequence().onSuccess(on: .synchronous) { sink($0.count) }
        for promise in promises { promise.fulfill(1) }
    }
}

func futureLibFirstCompleted(_ count: Int) {
    let longLived = Promise<Int>()
    for _ in 0..<count {
        let work = Promise<Int>()
        [work.future, longLived.future].firstCompleted().onSuccess(on: .synchronous) { sink($0) }
        work.fulfill(1)
    }
    withExtendedLifetime(longLived) {}
}

func soakFirstCompleted(_ count: Int) {
    let shutdown = Promise<Int>()
    let before = residentBytes()
    for index in 0..<count {
        let work = Promise<Int>()
        [work.future, shutdown.future].firstCompleted().onSuccess(on: .synchronous) { sink($0) }
        work.fulfill(index)
    }
    let after = residentBytes()
    print("\(count) firstCompleted calls: resident \(before >> 10) KB before, \(after >> 10) KB after")
    print(shutdown.future.debugDescription)
    shutdown.fulfill(0)
}

/// The resident set in bytes, from /proc/self/statm (0 where there is none).
func residentBytes() -> Int {
    let file = open("/proc/self/statm", O_RDONLY)
    guard file >= 0 else { return 0 }
    defer { close(file) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
    guard count > 0 else { return 0 }
    let fields = String(decoding: buffer[..<count], as: UTF8.self).split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
