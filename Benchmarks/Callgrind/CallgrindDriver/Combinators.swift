// Scenarios of the combinators over many futures with inputs still pending:
//
//   futurelib-sequence-pending          sequence() of 1,000 pending futures, then all completed (one operation):
//                                          the cost of the continuation each pending input holds
//   futurelib-zip-pending               zip of 3 pending futures, then all completed (one operation): the
//                                          pack form's per-input cost
//   futurelib-results-pending           results() of 1,000 pending futures, then all completed (one operation)
//   futurelib-first-completed           firstCompleted() of 2 futures, one completed later and one pending for
//                                          the whole run (one operation): the server pattern, a request raced
//                                          against a long-lived shutdown future
//   futurelib-race                      Future.race of 2 operations on `.synchronous`, one completed later and one
//                                          pending for the whole run (one operation): the loser is cancelled and
//                                          the race's continuation removed from it
//   soak-first-completed                not for valgrind: `count` firstCompleted() calls against one long-lived
//                                          pending future; prints the heap bytes in use before and after, and how
//                                          many continuations wait on the long-lived future at the end (`make soak`
//                                          reads the resident set of the same pattern in a server-shaped run)

import FutureLib

func futureLibSequencePending(_ count: Int) {
    for _ in 0..<count {
        let promises = (0..<1_000).map { _ in Promise<Int>() }
        promises.map(\.future).sequence().onSuccess(on: .synchronous) { sink($0.count) }
        for promise in promises { promise.fulfill(1) }
    }
}

func futureLibZipPending(_ count: Int) {
    for _ in 0..<count {
        let (a, b, c) = (Promise<Int>(), Promise<String>(), Promise<Double>())
        zip(a.future, b.future, c.future, on: .synchronous).onSuccess(on: .synchronous) { sink($0.0) }
        a.fulfill(1)
        b.fulfill("b")
        c.fulfill(2)
    }
}

func futureLibResultsPending(_ count: Int) {
    for _ in 0..<count {
        let promises = (0..<1_000).map { _ in Promise<Int>() }
        promises.map(\.future).results().onSuccess(on: .synchronous) { sink($0.count) }
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

func futureLibRace(_ count: Int) {
    let longLived = Promise<Int>()
    for _ in 0..<count {
        let work = Promise<Int>()
        Future.race(on: .synchronous, [{ @Sendable _ in work.future }, { @Sendable _ in longLived.future }])
            .onSuccess(on: .synchronous) { sink($0) }
        work.fulfill(1)
    }
    withExtendedLifetime(longLived) {}
}

func soakFirstCompleted(_ count: Int) {
    let shutdown = Promise<Int>()
    let before = heapBytesInUse()
    for index in 0..<count {
        let work = Promise<Int>()
        [work.future, shutdown.future].firstCompleted().onSuccess(on: .synchronous) { sink($0) }
        work.fulfill(index)
    }
    let after = heapBytesInUse()
    print("\(count) firstCompleted calls: heap in use \(before >> 10) KB before, \(after >> 10) KB after")
    print(shutdown.future.debugDescription)
    shutdown.fulfill(0)
}
