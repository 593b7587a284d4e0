import Foundation
import FutureLib

/// An execution context that runs each job on a new thread: for jobs that block, which must
/// not occupy the threads of `.default` or Dispatch's small pool.
package struct ThreadPerJob: ExecutionContext {
    package init() {}

    package func execute(_ work: @escaping @Sendable () -> Void) {
        let thread = Thread { work() }
        thread.stackSize = 1 << 20
        thread.start()
    }
}
